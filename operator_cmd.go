package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/compliance-appliance/compliance/app"
)

// operatorCmd flags logins as the appliance operator, who may use the
// appliance-wide admin routes (/v1/admin/...). Only the CLI sets the flag:
// whoever runs it already holds the data directory.
func operatorCmd(v *viper.Viper) *cobra.Command {
	op := &cobra.Command{Use: "operator", Short: "Manage the appliance operators (appliance-wide administration)"}
	change := func(use, short string, fn func(a *app.App, ctx context.Context, email string) (*app.User, error)) *cobra.Command {
		return &cobra.Command{
			Use:   use + " EMAIL",
			Short: short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return withEnv(v, cmd, func(ctx context.Context, e *env) error {
					u, err := fn(e.app, ctx, args[0])
					if err != nil {
						return err
					}
					if jsonOut(cmd) {
						return printJSON(cmd.OutOrStdout(), map[string]string{"id": u.ID, "email": u.Email})
					}
					fmt.Fprintln(cmd.OutOrStdout(), u.ID)
					return nil
				})
			},
		}
	}
	grant := change("grant", "Flag a person (by login e-mail) as appliance operator", (*app.App).GrantOperator)
	revoke := change("revoke", "Remove a person's operator flag", (*app.App).RevokeOperator)
	list := &cobra.Command{
		Use:   "list",
		Short: "List the appliance operators",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withEnv(v, cmd, func(ctx context.Context, e *env) error {
				ops, err := e.app.ListOperators(ctx)
				if err != nil {
					return err
				}
				if jsonOut(cmd) {
					return printJSON(cmd.OutOrStdout(), map[string]any{"data": ops})
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tEMAIL\tNAME\tGRANTED")
				for _, o := range ops {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.UserID, o.Email, o.Name, o.GrantedAt.Format(time.RFC3339))
				}
				return tw.Flush()
			})
		},
	}
	op.AddCommand(grant, revoke, list)
	return op
}
