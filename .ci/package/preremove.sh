#!/bin/sh
# Before removal (not before an upgrade): stop the service. The data
# directory /var/lib/compliance is kept.
set -e
case "$1" in
  remove|0)
    if [ -d /run/systemd/system ]; then
      systemctl disable --now compliance >/dev/null 2>&1 || true
    fi
    ;;
esac
