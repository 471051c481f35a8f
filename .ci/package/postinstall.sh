#!/bin/sh
# After install or upgrade: the service user, its data directory, the unit.
set -e
if ! getent group compliance >/dev/null; then
  groupadd --system compliance
fi
if ! getent passwd compliance >/dev/null; then
  useradd --system --gid compliance --home-dir /var/lib/compliance --no-create-home \
    --shell /usr/sbin/nologin --comment "compliance appliance" compliance
fi
install -d -o compliance -g compliance -m 0700 /var/lib/compliance
chown root:compliance /etc/compliance/config.yaml
chmod 0640 /etc/compliance/config.yaml
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload >/dev/null 2>&1 || true
  # An upgrade restarts a running service; a first install leaves it to the
  # operator: systemctl enable --now compliance
  if systemctl is-active --quiet compliance; then
    systemctl restart compliance || true
  fi
fi
