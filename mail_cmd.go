package main

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/mail"
)

func setMailDefaults(v *viper.Viper) {
	v.SetDefault("mail.smtp_host", "")
	v.SetDefault("mail.smtp_port", 0)
	v.SetDefault("mail.tls", mail.TLSStartTLS)
	v.SetDefault("mail.username", "")
	v.SetDefault("mail.password", "")
	v.SetDefault("mail.from", "")
	v.SetDefault("mail.helo", "")
	v.SetDefault("mail.ca_file", "")
	v.SetDefault("mail.timeout", "30s")
}

// configureMail wires the SMTP client in when mail.smtp_host is set;
// without it the appliance sends no mail and says so where mail would go.
func configureMail(v *viper.Viper, a *app.App) error {
	roots, err := mailRoots(v)
	if err != nil {
		return err
	}
	// Settings the operator saves in the database (the Appliance pages)
	// take precedence over these; the CA file, HELO name and timeout of
	// the configuration apply to both.
	factory := func(s app.MailSettings) (app.MailSender, error) {
		c, err := mail.New(mail.Config{Host: s.Host, Port: s.Port, TLS: s.TLS, Username: s.Username, Password: s.Password, From: s.From,
			HELO: v.GetString("mail.helo"), Timeout: v.GetDuration("mail.timeout"), RootCAs: roots})
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	if v.GetString("mail.smtp_host") == "" {
		a.SetMailerFactory(factory, nil)
		return nil
	}
	cfg := app.MailSettings{Host: v.GetString("mail.smtp_host"), Port: v.GetInt("mail.smtp_port"), TLS: v.GetString("mail.tls"),
		Username: v.GetString("mail.username"), Password: v.GetString("mail.password"), From: v.GetString("mail.from")}
	c, err := factory(cfg)
	if err != nil {
		return err
	}
	a.SetMailer(c)
	a.SetMailerFactory(factory, &cfg)
	return nil
}

// mailRoots reads mail.ca_file, if set.
func mailRoots(v *viper.Viper) (*x509.CertPool, error) {
	var roots *x509.CertPool
	if f := v.GetString("mail.ca_file"); f != "" {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("mail.ca_file: %w", err)
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("mail.ca_file: %s holds no PEM certificate", f)
		}
	}
	return roots, nil
}

func mailCmd(v *viper.Viper) *cobra.Command {
	m := &cobra.Command{Use: "mail", Short: "Check the appliance's e-mail: send a test message, list the outbox"}
	var to string
	test := &cobra.Command{
		Use:   "test --to ADDRESS",
		Short: "Queue a test message and deliver it now through the configured SMTP server",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withEnv(v, cmd, func(ctx context.Context, e *env) error {
				q, err := e.app.QueueMail(ctx, "", "test", app.MailMessage{To: to, Subject: "Test message from the compliance appliance",
					Text: "This message confirms that the compliance appliance can send e-mail through its configured SMTP server.\n"})
				if err != nil {
					return err
				}
				if _, err := e.app.DeliverMail(ctx); err != nil {
					return err
				}
				recent, err := e.app.ListMail(ctx, 50)
				if err != nil {
					return err
				}
				for _, m := range recent {
					if m.ID != q.ID {
						continue
					}
					if jsonOut(cmd) {
						return printJSON(cmd.OutOrStdout(), m)
					}
					switch m.Status {
					case app.MailSent:
						fmt.Fprintf(cmd.OutOrStdout(), "sent %s to %s\n", m.ID, m.To)
						return nil
					case app.MailQueued:
						return fmt.Errorf("not sent yet (%s); it stays queued and `serve` retries it: %s", m.ID, m.LastError)
					default:
						return fmt.Errorf("failed (%s): %s", m.ID, m.LastError)
					}
				}
				return fmt.Errorf("message %s is not in the outbox", q.ID)
			})
		},
	}
	test.Flags().StringVar(&to, "to", "", "recipient address")
	_ = test.MarkFlagRequired("to")
	var n int
	list := &cobra.Command{
		Use:   "list",
		Short: "List the newest messages of the outbox with their status",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withEnv(v, cmd, func(ctx context.Context, e *env) error {
				msgs, err := e.app.ListMail(ctx, n)
				if err != nil {
					return err
				}
				if jsonOut(cmd) {
					return printJSON(cmd.OutOrStdout(), msgs)
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tKIND\tTO\tSTATUS\tATTEMPTS\tCREATED\tLAST ERROR")
				for _, m := range msgs {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", m.ID, m.Kind, m.To, m.Status, m.Attempts, m.CreatedAt.Format("2006-01-02 15:04"), m.LastError)
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().IntVar(&n, "limit", 50, "how many messages")
	m.AddCommand(test, list)
	return m
}
