package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/compliance-appliance/compliance/agent"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

// agentCmd is `compliance agent`: the device agent in the same binary.
func agentCmd(v *viper.Viper) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the device agent: report this computer's security settings to the appliance",
	}
	cmd.PersistentFlags().String("agent-dir", agent.DefaultConfigDir(), "directory of the agent's state file")
	cmd.PersistentFlags().StringSlice("edr-process", nil, "process names of an EDR or antivirus product that count as antivirus")

	enroll := &cobra.Command{
		Use:   "enroll",
		Short: "Register this device with the appliance: with an enrolment token, or by signing in through the browser",
		RunE: func(cmd *cobra.Command, _ []string) error {
			server, _ := cmd.Flags().GetString("server")
			token, _ := cmd.Flags().GetString("token")
			name, _ := cmd.Flags().GetString("name")
			dir, _ := cmd.Flags().GetString("agent-dir")
			if token == "" {
				token = os.Getenv("COMPLIANCE_AGENT_TOKEN")
			}
			if server == "" {
				return errors.New("--server is required: the appliance's URL")
			}
			if !strings.HasPrefix(server, "http://") && !strings.HasPrefix(server, "https://") {
				return fmt.Errorf("--server must be an http(s) URL, got %q", server)
			}
			env := agentEnv(cmd)
			info := agent.Describe(cmd.Context(), env)
			if name != "" {
				info.Name = name
			}
			client := agent.NewClient(server, version)
			var st *agent.State
			var err error
			if token != "" {
				st, err = client.Enroll(cmd.Context(), token, info)
			} else {
				org, _ := cmd.Flags().GetString("organization")
				st, err = browserEnroll(cmd, client, org, info)
			}
			if err != nil {
				return err
			}
			if err := st.Save(dir); err != nil {
				return fmt.Errorf("save the agent state in %s: %w", dir, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "enrolled device %s in organization %s\n", st.DeviceID, st.OrganizationID)
			return nil
		},
	}
	enroll.Flags().String("server", "", "the appliance's URL, e.g. https://compliance.example.com")
	enroll.Flags().String("token", "", "an enrolment token (cen_...)")
	enroll.Flags().String("name", "", "the device's name (default: the host name)")
	enroll.Flags().String("organization", "", "with the browser sign-in: the organization (id or slug) to enrol into, when you belong to several")

	run := &cobra.Command{
		Use:   "run",
		Short: "Check this device and check in, on an interval (or once)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			once, _ := cmd.Flags().GetBool("once")
			interval, _ := cmd.Flags().GetDuration("interval")
			dir, _ := cmd.Flags().GetString("agent-dir")
			log := newLogger(v, cmd.ErrOrStderr())
			o := agent.Options{ConfigDir: dir, Version: version, Env: agentEnv(cmd), Once: once, Interval: interval, Log: log}
			if ok, err := agent.RunService(func(sctx context.Context) error { return agent.Run(sctx, o) }); ok {
				return err
			}
			return agent.Run(ctx, o)
		},
	}
	run.Flags().Bool("once", false, "check in once and exit")
	run.Flags().Duration("interval", 0, "time between check-ins (default: as the appliance asks, about an hour)")

	check := &cobra.Command{
		Use:   "check",
		Short: "Run the checks and print the results without sending them",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
			defer cancel()
			rs := agent.Collect(ctx, agentEnv(cmd), "")
			if jsonOut(cmd) {
				return printJSON(cmd.OutOrStdout(), rs)
			}
			for _, r := range rs {
				state := "FAIL"
				if r.Passed {
					state = "pass"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%-16s %s  %s\n", r.CheckType, state, r.Message)
			}
			return nil
		},
	}
	check.Flags().Bool("json", false, "print JSON")
	cmd.AddCommand(enroll, run, check, serviceCmd(true), serviceCmd(false))
	return cmd
}

// agentEnv is the real machine, with the configured EDR process names.
func agentEnv(cmd *cobra.Command) agent.Env {
	env := agent.SystemEnv()
	env.EDRProcesses, _ = cmd.Flags().GetStringSlice("edr-process")
	return env
}

// browserEnroll signs in through the browser (the page's address is
// printed; open it on this computer) and registers the device for the
// person who approved.
func browserEnroll(cmd *cobra.Command, c *agent.Client, org string, info agent.DeviceInfo) (*agent.State, error) {
	sr, err := c.StartSignIn()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Open this address in a browser on this computer, sign in and approve:\n\n  %s\n\nWaiting for the approval (at most %s)...\n", sr.URL, agent.SignInTimeout)
	session, err := c.Wait(cmd.Context(), sr)
	if err != nil {
		return nil, err
	}
	orgs, err := c.MyOrganizations(cmd.Context(), session)
	if err != nil {
		return nil, err
	}
	o, err := agent.PickOrganization(orgs, org)
	if err != nil {
		return nil, err
	}
	return c.EnrollWithSession(cmd.Context(), session, o.ID, info)
}

// serviceCmd is `compliance agent install` (or `uninstall`): the agent as a
// systemd unit, a launchd daemon or a Windows service.
func serviceCmd(install bool) *cobra.Command {
	use, short := "install", "Run the agent as a service: a systemd unit (Linux), a launchd daemon (macOS) or a Windows service"
	if !install {
		use, short = "uninstall", "Stop the agent's service and remove it"
	}
	c := &cobra.Command{
		Use:   use,
		Short: short,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, _ := cmd.Flags().GetString("agent-dir")
			unitDir, _ := cmd.Flags().GetString("unit-dir")
			user, _ := cmd.Flags().GetBool("user")
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			if exe, err = filepath.EvalSymlinks(exe); err != nil {
				return err
			}
			if dir, err = filepath.Abs(dir); err != nil {
				return err
			}
			if user && runtime.GOOS != "linux" {
				return errors.New("--user is for Linux (a systemd user unit)")
			}
			o := agent.InstallOptions{Spec: agent.ServiceSpec{Executable: exe, ConfigDir: dir, User: user}, GOOS: runtime.GOOS,
				UnitDir: unitDir, IsRoot: agent.IsRoot, Run: agent.RunCommand}
			if install {
				if _, err := agent.LoadState(dir); err != nil {
					return fmt.Errorf("enrol first, with the same --agent-dir (%s): %w", dir, err)
				}
			}
			do := agent.Uninstall
			if install {
				do = agent.Install
			}
			res, err := do(o)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch {
			case res.Path != "" && install:
				fmt.Fprintf(out, "wrote %s\n", res.Path)
			case res.Path != "":
				fmt.Fprintf(out, "removed %s\n", res.Path)
			case install:
				fmt.Fprintf(out, "registered the Windows service %s\n", agent.WindowsName)
			default:
				fmt.Fprintf(out, "removed the Windows service %s\n", agent.WindowsName)
			}
			for _, n := range res.Next {
				fmt.Fprintf(out, "then run: %s\n", n)
			}
			return nil
		},
	}
	c.Flags().String("unit-dir", "", "write the unit or property list to this directory instead, without enabling it (no root needed)")
	c.Flags().Bool("user", false, "Linux: a systemd user unit in your session (checks your desktop's screen lock) instead of a system unit")
	return c
}
