-- The SMTP settings the appliance operator keeps on the Appliance pages.
-- One row at most: when it exists it takes precedence over the mail.*
-- settings of the configuration file, which stay the default. The SMTP
-- password is sealed with the data directory's key and never returned.
CREATE TABLE mail_settings (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    smtp_host TEXT NOT NULL,
    smtp_port INTEGER NOT NULL DEFAULT 0,
    tls TEXT NOT NULL CHECK (tls IN ('starttls', 'implicit', 'none')),
    username TEXT NOT NULL DEFAULT '',
    sealed_password BLOB,
    from_address TEXT NOT NULL,
    updated_by TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL
) STRICT;
