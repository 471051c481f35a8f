// Command compliance is the self-hosted compliance-management appliance:
// the REST API, the web UI and the background scheduler in one binary.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/compliance-appliance/compliance/app"
	"github.com/compliance-appliance/compliance/storage"
	"github.com/compliance-appliance/compliance/web"
	"github.com/compliance-appliance/compliance/web/httpx"
	"github.com/compliance-appliance/compliance/webhook"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

// version is stamped by the Makefile.
var version = "dev"

func main() {
	if err := rootCmd().Execute(); err != nil {
		os.Exit(1)
	}
}

func rootCmd() *cobra.Command {
	v := viper.New()
	root := &cobra.Command{
		Use:           "compliance",
		Short:         "Self-hosted compliance management: frameworks, controls, evidence, vendors, risks, findings",
		SilenceUsage:  true,
		SilenceErrors: false,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return loadConfig(v, cmd)
		},
	}
	root.PersistentFlags().String("config", "", "YAML config file")
	root.PersistentFlags().String("data-dir", "./data", "data directory (database, files, secrets)")
	root.PersistentFlags().Bool("json", false, "print one JSON object on stdout")
	v.SetDefault("addr", "127.0.0.1:3333")
	v.SetDefault("data_dir", "./data")
	// database_url (postgres://...) selects PostgreSQL; empty, the SQLite
	// file in data_dir.
	v.SetDefault("database_url", "")
	v.SetDefault("log_format", "text")
	v.SetDefault("log_level", "info")
	v.SetDefault("public_url", "")
	v.SetDefault("max_upload_mb", 50)
	v.SetDefault("enterprise_rate_per_minute", 3000)
	v.SetDefault("enterprise_burst", 6000)
	v.SetDefault("read_cache_mb", storage.DefaultReadCacheBytes>>20)
	v.SetDefault("shutdown_timeout", "30s")
	v.SetDefault("session_idle_timeout", "8h")
	v.SetDefault("session_absolute_timeout", "168h")
	v.SetDefault("oauth_access_token_lifetime", "1h")
	v.SetDefault("oauth_refresh_token_lifetime", "720h")
	v.SetDefault("trusted_proxies", []string{})
	v.SetDefault("metrics_addr", "")
	v.SetDefault("metrics_token", "")
	v.SetDefault("tls_cert_file", "")
	v.SetDefault("tls_key_file", "")
	v.SetDefault("tls_redirect_addr", "")
	v.SetDefault("assistant.model.stream", true)
	v.SetDefault("assistant.model.timeout", "60s")
	v.SetDefault("assistant.model.max_tokens", 1024)
	v.SetDefault("agent.downloads_dir", "")
	_ = v.BindPFlag("data_dir", root.PersistentFlags().Lookup("data-dir"))

	setWebhookDefaults(v)
	setMailDefaults(v)
	setIntegrationDefaults(v)
	setAutomationDefaults(v)
	setBackupDefaults(v)
	setPentestDefaults(v)
	setBrowserDefaults(v)
	setFilesDefaults(v)
	root.AddCommand(serveCmd(v), mailCmd(v), migrateCmd(v), versionCmd(v), orgCmd(v), userCmd(v), apikeyCmd(v), backupCmd(v), restoreCmd(v), doctorCmd(v),
		auditCmd(v))
	root.AddCommand(agentCmd(v))
	root.AddCommand(pentestCmd(v))
	root.AddCommand(operatorCmd(v))
	root.AddCommand(copyCmd(v))
	return root
}

// loadConfig applies flags > COMPLIANCE_* environment > config file > defaults.
func loadConfig(v *viper.Viper, cmd *cobra.Command) error {
	v.SetEnvPrefix("COMPLIANCE")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_", ".", "_"))
	v.AutomaticEnv()
	if f, _ := cmd.Flags().GetString("config"); f != "" {
		v.SetConfigFile(f)
		if err := v.ReadInConfig(); err != nil {
			return fmt.Errorf("read config %s: %w", f, err)
		}
	}
	return nil
}

func jsonOut(cmd *cobra.Command) bool {
	b, _ := cmd.Flags().GetBool("json")
	return b
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	return enc.Encode(v)
}

func newLogger(v *viper.Viper, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(v.GetString("log_level"))); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if v.GetString("log_format") == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// env is what every command opens: the data dir, the database, the services.
type env struct {
	dir storage.DataDir
	db  *storage.DB
	app *app.App
	log *slog.Logger
}

func openEnv(ctx context.Context, v *viper.Viper, log *slog.Logger) (*env, error) {
	dir := storage.DataDir{Root: v.GetString("data_dir")}
	if err := dir.Ensure(); err != nil {
		return nil, err
	}
	location := dir.DBPath()
	if u := v.GetString("database_url"); u != "" {
		if !storage.IsPostgresURL(u) {
			return nil, fmt.Errorf("database_url: want a postgres:// URL, got %q (leave it empty for the SQLite file in data_dir)", u)
		}
		location = u
	}
	db, err := storage.OpenURL(ctx, location)
	if err != nil {
		return nil, err
	}
	// A database with data and pending migrations is archived first.
	recordPreMigration, err := preMigrationBackup(ctx, v, dir, db, log)
	if err != nil {
		db.Close()
		return nil, err
	}
	applied, err := db.Migrate(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	for _, m := range applied {
		log.Info("migration applied", slog.String("name", m))
	}
	db.SetReadCacheBudget(v.GetInt64("read_cache_mb") << 20)
	files, err := openFileStore(v, dir)
	if err != nil {
		db.Close()
		return nil, err
	}
	a := app.NewWithFiles(db, files, nil, log, app.Config{
		EnterpriseRate:  v.GetInt("enterprise_rate_per_minute"),
		EnterpriseBurst: v.GetInt("enterprise_burst"),
		PublicURL:       v.GetString("public_url"),
	})
	if err := configureWebhooks(v, dir, a); err != nil {
		db.Close()
		return nil, err
	}
	if err := configureMail(v, a); err != nil {
		db.Close()
		return nil, err
	}
	if err := configurePentests(v, a, dir.Root); err != nil {
		db.Close()
		return nil, err
	}
	configureBrowser(v, dir, a)
	if err := configureAssistant(v, a, log); err != nil {
		db.Close()
		return nil, err
	}
	if err := configureIntegrations(v, a); err != nil {
		db.Close()
		return nil, err
	}
	if err := configureTaskAutomations(v, a); err != nil {
		db.Close()
		return nil, err
	}
	a.ConfigureAuth(app.AuthConfig{
		SessionIdle:          v.GetDuration("session_idle_timeout"),
		SessionAbsolute:      v.GetDuration("session_absolute_timeout"),
		AccessTokenLifetime:  v.GetDuration("oauth_access_token_lifetime"),
		RefreshTokenLifetime: v.GetDuration("oauth_refresh_token_lifetime"),
	})
	// Published policies answer questionnaires beside the knowledge base.
	a.AddKnowledgeSource(a.PolicyKnowledgeSource())
	// The trust portal publishes the enabled frameworks' real scores.
	a.SetTrustComplianceSource(a.FrameworkTrustSource())
	e := &env{dir: dir, db: db, app: a, log: log}
	if recordPreMigration != nil {
		recordPreMigration(e)
	}
	return e, nil
}

func withEnv(v *viper.Viper, cmd *cobra.Command, fn func(ctx context.Context, e *env) error) error {
	ctx := cmd.Context()
	e, err := openEnv(ctx, v, newLogger(v, cmd.ErrOrStderr()))
	if err != nil {
		return err
	}
	defer e.db.Close()
	return fn(ctx, e)
}

func serveCmd(v *viper.Viper) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the API, UI and scheduler until SIGINT or SIGTERM",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log := newLogger(v, cmd.ErrOrStderr())
			e, err := openEnv(ctx, v, log)
			if err != nil {
				return err
			}
			defer e.db.Close()
			if err := checkFilesAtStart(ctx, v, e.dir, log); err != nil {
				return err
			}
			proxies := v.GetStringSlice("trusted_proxies")
			if err := httpx.ValidateTrustedProxies(proxies); err != nil {
				return err
			}
			hashKey, err := e.dir.Secret("session_hash_key", 64)
			if err != nil {
				return err
			}
			blockKey, err := e.dir.Secret("session_block_key", 32)
			if err != nil {
				return err
			}
			oauthKey, err := e.dir.Secret("oauth_hmac_key", 32)
			if err != nil {
				return err
			}
			mx, err := newMetrics(v, e, log)
			if err != nil {
				return err
			}
			bjobs, err := backupJobs(v, e)
			if err != nil {
				return err
			}
			app.SetAgentDownloadsDir(v.GetString("agent.downloads_dir"))
			srv, err := web.New(e.app, log, web.Options{
				Version:        version,
				MaxUploadBytes: int64(v.GetInt("max_upload_mb")) << 20,
				Health:         e.db.Ping,
				PublicURL:      v.GetString("public_url"),
				CookieHashKey:  hashKey,
				CookieBlockKey: blockKey,
				OAuthSecret:    oauthKey,
				TrustedProxies: proxies,
				WorkDir:        filepath.Join(e.dir.Root, "tmp"),
				Observer:       mx.observer(),
			})
			if err != nil {
				return err
			}
			certFile, keyFile, redirectAddr := v.GetString("tls_cert_file"), v.GetString("tls_key_file"), v.GetString("tls_redirect_addr")
			useTLS, err := tlsFiles(certFile, keyFile, redirectAddr)
			if err != nil {
				return err
			}
			var certs *certReloader
			if useTLS {
				if certs, err = newCertReloader(certFile, keyFile); err != nil {
					return err
				}
			}
			addr := v.GetString("addr")
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", addr, err)
			}
			hs := &http.Server{Handler: mx.handler(srv), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
				ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
			var redirect *http.Server
			var redirectLn net.Listener
			if certs != nil {
				hs.TLSConfig = certs.tlsConfig()
				if redirectAddr != "" {
					if redirectLn, err = net.Listen("tcp", redirectAddr); err != nil {
						ln.Close()
						return fmt.Errorf("listen on %s: %w", redirectAddr, err)
					}
					redirect = &http.Server{Handler: redirectHandler(v.GetString("public_url"), ln.Addr().String()),
						ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 30 * time.Second,
						ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
				}
			}
			jobCtx, stopJobs := context.WithCancel(context.Background())
			deliverer := e.app.NewDeliverer(webhook.NewClient(e.app.NetworkPolicy()), deliveryOptions(v))
			runner := e.app.NewScheduler(append(scheduledJobs(e, deliverer.Options()), bjobs...)...)
			runner.Start(jobCtx)
			deliverer.Start(jobCtx)
			if err := e.app.StartPentests(jobCtx); err != nil {
				log.Error("start pentests", slog.Any("error", err))
			}
			if err := e.app.StartBrowser(jobCtx); err != nil {
				log.Error("start browser", slog.Any("error", err))
			}
			integWG, err := startIntegrations(jobCtx, e)
			if err != nil {
				stopJobs()
				return err
			}
			autoWG, err := startTaskAutomations(jobCtx, e)
			if err != nil {
				stopJobs()
				return err
			}
			errc := make(chan error, 3)
			if certs != nil {
				go func() { errc <- hs.ServeTLS(ln, "", "") }()
			} else {
				go func() { errc <- hs.Serve(ln) }()
			}
			if redirect != nil {
				go func() { errc <- redirect.Serve(redirectLn) }()
				log.Info("redirecting http to https", slog.String("addr", redirectLn.Addr().String()))
			}
			// SIGHUP loads the TLS certificate again; new connections get
			// it, open ones keep theirs.
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			go reloadOnHangup(jobCtx, hup, certs, log)
			log.Info("listening", slog.String("addr", ln.Addr().String()), slog.Bool("tls", certs != nil),
				slog.String("version", version), slog.String("data_dir", e.dir.Root))
			mx.start(log, errc)
			select {
			case err := <-errc:
				_ = hs.Close()
				if redirect != nil {
					_ = redirect.Close()
				}
				_ = srv.Close()
				stopJobs()
				runner.Wait()
				deliverer.Wait()
				e.app.WaitPentests()
				e.app.WaitBrowser()
				integWG.Wait()
				autoWG.Wait()
				return err
			case <-ctx.Done():
			}
			// A second signal during the drain ends the process at once.
			stop()
			log.Info("shutting down")
			timeout, err := time.ParseDuration(v.GetString("shutdown_timeout"))
			if err != nil {
				timeout = 30 * time.Second
			}
			sctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			shutdownErr := hs.Shutdown(sctx)
			mx.shutdown(sctx)
			if redirect != nil {
				_ = redirect.Shutdown(sctx)
			}
			_ = srv.Close() // ends the web application's jobs, removes their files
			stopJobs()
			runner.Wait()
			deliverer.Wait()
			e.app.WaitPentests()
			e.app.WaitBrowser()
			integWG.Wait()
			autoWG.Wait()
			if err := e.app.FlushKeyUsage(sctx); err != nil {
				log.Warn("flush key usage", slog.Any("error", err))
			}
			if shutdownErr != nil {
				return fmt.Errorf("shutdown: %w", shutdownErr)
			}
			log.Info("stopped")
			return nil
		},
	}
	cmd.Flags().String("addr", "127.0.0.1:3333", "listen address HOST:PORT")
	_ = v.BindPFlag("addr", cmd.Flags().Lookup("addr"))
	return cmd
}

func migrateCmd(v *viper.Viper) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply schema migrations and exit",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withEnv(v, cmd, func(ctx context.Context, e *env) error {
				applied, known, err := e.db.SchemaVersion(ctx)
				if err != nil {
					return err
				}
				if jsonOut(cmd) {
					return printJSON(cmd.OutOrStdout(), map[string]any{"schemaVersion": applied, "latest": known})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "schema at version %d\n", applied)
				return nil
			})
		},
	}
}

func versionCmd(v *viper.Viper) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if jsonOut(cmd) {
				return printJSON(cmd.OutOrStdout(), map[string]string{"version": version})
			}
			fmt.Fprintln(cmd.OutOrStdout(), version)
			return nil
		},
	}
}

func orgCmd(v *viper.Viper) *cobra.Command {
	org := &cobra.Command{Use: "org", Short: "Manage organizations"}
	create := &cobra.Command{
		Use:   "create",
		Short: "Create an organization",
		RunE: func(cmd *cobra.Command, _ []string) error {
			name, _ := cmd.Flags().GetString("name")
			plan, _ := cmd.Flags().GetString("plan")
			return withEnv(v, cmd, func(ctx context.Context, e *env) error {
				o, err := e.app.CreateOrganization(ctx, name, plan)
				if err != nil {
					return err
				}
				if jsonOut(cmd) {
					return printJSON(cmd.OutOrStdout(), map[string]string{"id": o.ID, "name": o.Name, "plan": o.Plan})
				}
				fmt.Fprintln(cmd.OutOrStdout(), o.ID)
				return nil
			})
		},
	}
	create.Flags().String("name", "", "organization name")
	create.Flags().String("plan", app.PlanProfessional, "free, starter, professional or enterprise")
	_ = create.MarkFlagRequired("name")
	list := &cobra.Command{
		Use:   "list",
		Short: "List organizations",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withEnv(v, cmd, func(ctx context.Context, e *env) error {
				orgs, err := e.app.ListOrganizations(ctx)
				if err != nil {
					return err
				}
				if jsonOut(cmd) {
					return printJSON(cmd.OutOrStdout(), map[string]any{"data": orgs})
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tPLAN")
				for _, o := range orgs {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", o.ID, o.Name, o.Plan)
				}
				return tw.Flush()
			})
		},
	}
	org.AddCommand(create, list)
	return org
}

func userCmd(v *viper.Viper) *cobra.Command {
	user := &cobra.Command{Use: "user", Short: "Manage people with a login"}
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a person with a login",
		RunE: func(cmd *cobra.Command, _ []string) error {
			orgID, _ := cmd.Flags().GetString("org")
			email, _ := cmd.Flags().GetString("email")
			name, _ := cmd.Flags().GetString("name")
			role, _ := cmd.Flags().GetString("role")
			pwStdin, _ := cmd.Flags().GetBool("password-stdin")
			var password string
			if pwStdin {
				line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if err != nil && !errors.Is(err, io.EOF) {
					return fmt.Errorf("read password: %w", err)
				}
				password = strings.TrimRight(line, "\r\n")
			}
			return withEnv(v, cmd, func(ctx context.Context, e *env) error {
				ctx = app.SystemContext(ctx, orgID)
				if _, err := e.app.GetOrganization(ctx); err != nil {
					return fmt.Errorf("organization %s: %w", orgID, err)
				}
				p, err := e.app.CreatePerson(ctx, app.PersonCreate{Email: email, Name: name, Role: role})
				if err != nil {
					return err
				}
				if pwStdin {
					if err := e.app.SetPassword(ctx, p.ID, password); err != nil {
						return err
					}
				}
				if operator, _ := cmd.Flags().GetBool("operator"); operator {
					if _, err := e.app.GrantOperator(ctx, p.Email); err != nil {
						return err
					}
				}
				if jsonOut(cmd) {
					return printJSON(cmd.OutOrStdout(), map[string]string{"id": p.ID})
				}
				fmt.Fprintln(cmd.OutOrStdout(), p.ID)
				return nil
			})
		},
	}
	create.Flags().String("org", "", "organization id")
	create.Flags().String("email", "", "email address (the login)")
	create.Flags().String("name", "", "full name")
	create.Flags().String("role", "", "owner, admin, auditor, employee or contractor")
	create.Flags().Bool("password-stdin", false, "read the password from the first line of standard input")
	create.Flags().Bool("operator", false, "also flag the person as appliance operator (see operator grant)")
	for _, f := range []string{"org", "email", "name", "role"} {
		_ = create.MarkFlagRequired(f)
	}
	setPassword := &cobra.Command{
		Use:   "set-password",
		Short: "Set a person's login password (read from standard input); ends their sessions",
		RunE: func(cmd *cobra.Command, _ []string) error {
			email, _ := cmd.Flags().GetString("email")
			if pw, _ := cmd.Flags().GetBool("password-stdin"); !pw {
				return errors.New("give --password-stdin and the password on the first line of standard input")
			}
			line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
			if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("read password: %w", err)
			}
			password := strings.TrimRight(line, "\r\n")
			return withEnv(v, cmd, func(ctx context.Context, e *env) error {
				u, err := e.app.SetUserPassword(ctx, email, password)
				if err != nil {
					return err
				}
				if jsonOut(cmd) {
					return printJSON(cmd.OutOrStdout(), map[string]string{"id": u.ID})
				}
				fmt.Fprintln(cmd.OutOrStdout(), u.ID)
				return nil
			})
		},
	}
	setPassword.Flags().String("email", "", "email address (the login)")
	setPassword.Flags().Bool("password-stdin", false, "read the password from the first line of standard input")
	_ = setPassword.MarkFlagRequired("email")
	user.AddCommand(create, setPassword)
	return user
}

func apikeyCmd(v *viper.Viper) *cobra.Command {
	k := &cobra.Command{Use: "apikey", Short: "Manage API keys"}
	create := &cobra.Command{
		Use:   "create",
		Short: "Create an API key; prints the plaintext once",
		RunE: func(cmd *cobra.Command, _ []string) error {
			orgID, _ := cmd.Flags().GetString("org")
			role, _ := cmd.Flags().GetString("role")
			name, _ := cmd.Flags().GetString("name")
			expiresIn, _ := cmd.Flags().GetString("expires-in")
			return withEnv(v, cmd, func(ctx context.Context, e *env) error {
				ctx = app.SystemContext(ctx, orgID)
				if _, err := e.app.GetOrganization(ctx); err != nil {
					return fmt.Errorf("organization %s: %w", orgID, err)
				}
				key, err := e.app.CreateAPIKey(ctx, app.APIKeyCreate{Name: name, Role: role, ExpiresIn: expiresIn})
				if err != nil {
					return err
				}
				if jsonOut(cmd) {
					return printJSON(cmd.OutOrStdout(), map[string]any{"id": key.ID, "key": key.Key, "role": key.Role, "expiresAt": key.ExpiresAt})
				}
				fmt.Fprintln(cmd.OutOrStdout(), key.Key)
				return nil
			})
		},
	}
	create.Flags().String("org", "", "organization id")
	create.Flags().String("role", "", "owner, admin, auditor, employee or contractor")
	create.Flags().String("name", "", "what the key is for")
	create.Flags().String("expires-in", "", "lifetime, e.g. 720h or 90d (default: no expiry)")
	for _, f := range []string{"org", "role", "name"} {
		_ = create.MarkFlagRequired(f)
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List an organization's API keys",
		RunE: func(cmd *cobra.Command, _ []string) error {
			orgID, _ := cmd.Flags().GetString("org")
			return withEnv(v, cmd, func(ctx context.Context, e *env) error {
				keys, err := e.app.ListAPIKeys(app.SystemContext(ctx, orgID))
				if err != nil {
					return err
				}
				if jsonOut(cmd) {
					return printJSON(cmd.OutOrStdout(), map[string]any{"data": keys})
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tROLE\tPREFIX\tEXPIRES\tLAST USED\tREVOKED")
				for _, k := range keys {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Role, k.Prefix, fmtTime(k.ExpiresAt), fmtTime(k.LastUsedAt), fmtTime(k.RevokedAt))
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().String("org", "", "organization id")
	_ = list.MarkFlagRequired("org")
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API key (a running server stops accepting it within 2 seconds)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withEnv(v, cmd, func(ctx context.Context, e *env) error {
				if err := e.app.RevokeAPIKeyByID(ctx, args[0]); err != nil {
					return fmt.Errorf("revoke %s: %w", args[0], err)
				}
				if jsonOut(cmd) {
					return printJSON(cmd.OutOrStdout(), map[string]any{"id": args[0], "revoked": true})
				}
				return nil
			})
		},
	}
	k.AddCommand(create, list, revoke)
	return k
}

func fmtTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}
