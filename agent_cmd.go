package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
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
		Short: "Register this device with the appliance using an enrolment token",
		RunE: func(cmd *cobra.Command, _ []string) error {
			server, _ := cmd.Flags().GetString("server")
			token, _ := cmd.Flags().GetString("token")
			name, _ := cmd.Flags().GetString("name")
			dir, _ := cmd.Flags().GetString("agent-dir")
			if token == "" {
				token = os.Getenv("COMPLIANCE_AGENT_TOKEN")
			}
			if server == "" || token == "" {
				return errors.New("--server and --token (or COMPLIANCE_AGENT_TOKEN) are required; an administrator creates enrolment tokens under Devices")
			}
			if !strings.HasPrefix(server, "http://") && !strings.HasPrefix(server, "https://") {
				return fmt.Errorf("--server must be an http(s) URL, got %q", server)
			}
			env := agentEnv(cmd)
			info := agent.Describe(cmd.Context(), env)
			if name != "" {
				info.Name = name
			}
			st, err := agent.NewClient(server, version).Enroll(cmd.Context(), token, info)
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
			return agent.Run(ctx, agent.Options{ConfigDir: dir, Version: version, Env: agentEnv(cmd), Once: once, Interval: interval, Log: log})
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
	cmd.AddCommand(enroll, run, check)
	return cmd
}

// agentEnv is the real machine, with the configured EDR process names.
func agentEnv(cmd *cobra.Command) agent.Env {
	env := agent.SystemEnv()
	env.EDRProcesses, _ = cmd.Flags().GetStringSlice("edr-process")
	return env
}
