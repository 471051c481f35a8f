-- The appliance operator: a person (a login) flagged from the CLI
-- (`compliance operator grant EMAIL`, `user create --operator`) who may use
-- the appliance-wide admin routes. The flag belongs to the login, not to an
-- organization, and gives no access to any organization's data.
CREATE TABLE operators (
    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    granted_at TEXT NOT NULL
) STRICT;
