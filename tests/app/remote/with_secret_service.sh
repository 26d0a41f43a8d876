#!/bin/sh
# Runs a command inside a private D-Bus session with an unlocked GNOME Keyring
# (a real Secret Service), HOME and the XDG folders in HOME_DIR (emptied
# first), so nothing of the user's keyring or settings is touched.
# Usage: with_secret_service.sh HOME_DIR COMMAND [ARGS...]
set -e
home=$1
shift
rm -rf "$home"
mkdir -p "$home/config" "$home/data"
mkdir -m 700 "$home/run"
export HOME="$home" XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" XDG_RUNTIME_DIR="$home/run"
# QtKeychain picks its backend by desktop; none here means the Secret Service.
unset XDG_CURRENT_DESKTOP DESKTOP_SESSION
# An empty password line unlocks (creating) the login keyring; with no line at
# all the daemon creates none.
exec dbus-run-session -- sh -c 'echo "" | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec "$@"' sh "$@"
