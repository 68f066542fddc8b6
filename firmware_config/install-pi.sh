#!/usr/bin/env bash
# Install pegwatch as a service on Raspberry Pi OS Bookworm (Pi 3/4/5, Zero 2 W).
#
#   sudo firmware_config/install-pi.sh            install or update
#   firmware_config/install-pi.sh --dry-run       show what would change
#
# Idempotent: running it again changes nothing that is already right. It
#   1. installs the apt packages (picamera2, OpenCV, NumPy, lgpio, ...),
#   2. creates the system user "pegwatch" in the gpio, video, i2c, spi groups,
#   3. copies this repository to /opt/pegwatch,
#   4. makes a venv there WITH the system site-packages and installs pegwatch
#      into it without letting pip replace apt's NumPy (see step 4),
#   5. installs /etc/pegwatch/pegwatch.toml if there is none (an arbiter's
#      edits are never overwritten; the shipped file goes to .dist beside it),
#   6. installs and enables systemd/pegwatch.service,
#   7. adds firmware_config/config.txt.fragment to config.txt once, between
#      marker lines, and says when a reboot is needed.
#
# Environment: PEGWATCH_ROOT (default empty) prefixes every file this script
# writes, so that it can be tried against a scratch directory; with
# --dry-run the commands that change the system (apt-get, useradd, usermod,
# pip, systemctl, chown) are printed instead of run.
set -euo pipefail

ROOT=${PEGWATCH_ROOT:-}
DRY_RUN=0
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
    sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run | -n) DRY_RUN=1 ;;
        --source)
            [ $# -ge 2 ] || { echo "install-pi.sh: --source needs a directory" >&2; exit 2; }
            SRC=$(cd "$2" && pwd)
            shift
            ;;
        -h | --help) usage; exit 0 ;;
        *) echo "install-pi.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done

APP_USER=pegwatch
APP_GROUPS=(gpio video i2c spi)
DEST=/opt/pegwatch
VENV=$DEST/.venv
ETC=/etc/pegwatch
UNIT=/etc/systemd/system/pegwatch.service
MODULES=/etc/modules-load.d/pegwatch.conf
BEGIN_MARK="# >>> pegwatch >>> (managed by /opt/pegwatch/firmware_config/install-pi.sh)"
END_MARK="# <<< pegwatch <<<"

APT_PACKAGES=(
    python3 python3-venv python3-pip
    # From apt, not pip: picamera2 is built against apt's NumPy and libcamera.
    python3-picamera2 python3-libcamera python3-numpy python3-opencv
    # lgpio from apt too: the old lgpio wheels on PyPI lack constants that
    # gpiozero's LGPIOFactory needs (gpiozero issue 1115).
    python3-lgpio python3-pil python3-spidev python3-smbus2
    # rpicam-hello --list-cameras, to check the camera (no GUI preview).
    rpicam-apps-lite i2c-tools fonts-dejavu-core rsync
)

REBOOT=0
CHANGED=0

say() { printf 'install-pi.sh: %s\n' "$*"; }

# Run a command that changes the system, or print it under --dry-run.
run() {
    if [ "$DRY_RUN" -eq 1 ]; then
        printf 'would run:'
        printf ' %q' "$@"
        printf '\n'
    else
        "$@"
    fi
}

# Install file $1 as $2 (under ROOT) with mode $3 when missing or different.
install_file() {
    local src=$1 dest=$ROOT$2 mode=$3
    if [ -f "$dest" ] && cmp -s "$src" "$dest"; then
        return 1
    fi
    mkdir -p "$(dirname "$dest")"
    install -m "$mode" "$src" "$dest"
    say "installed $2"
    CHANGED=1
    return 0
}

if [ "$DRY_RUN" -eq 0 ] && [ "$(id -u)" -ne 0 ]; then
    echo "install-pi.sh: run as root (sudo $0), or try --dry-run" >&2
    exit 2
fi
for f in systemd/pegwatch.service firmware_config/pegwatch.toml firmware_config/config.txt.fragment pyproject.toml; do
    if [ ! -f "$SRC/$f" ]; then
        echo "install-pi.sh: $SRC/$f is missing; run from a pegwatch checkout or pass --source" >&2
        exit 2
    fi
done

# 1. apt packages: only the missing ones, so a re-run does not touch apt.
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$pkg")
    fi
done
if [ ${#missing[@]} -gt 0 ]; then
    say "apt packages to install: ${missing[*]}"
    run apt-get update
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
    CHANGED=1
fi

# 2. The service user: a system account with no login, its home the state dir.
if ! getent passwd "$APP_USER" >/dev/null; then
    say "creating system user $APP_USER"
    run useradd --system --user-group --home-dir /var/lib/pegwatch --no-create-home \
        --shell /usr/sbin/nologin --comment "pegwatch table" "$APP_USER"
    CHANGED=1
fi
for group in "${APP_GROUPS[@]}"; do
    if ! getent group "$group" >/dev/null; then
        say "warning: group $group does not exist (not Raspberry Pi OS?); skipped"
        continue
    fi
    if ! id -nG "$APP_USER" 2>/dev/null | tr ' ' '\n' | grep -qx "$group"; then
        run usermod -a -G "$group" "$APP_USER"
        CHANGED=1
    fi
done

# 3. The code, owned by root: the service may read it, not change it.
if [ "$(cd "$SRC" && pwd -P)" != "$(mkdir -p "$ROOT$DEST" && cd "$ROOT$DEST" && pwd -P)" ]; then
    excludes=(--exclude=.venv --exclude=.git --exclude=__pycache__ --exclude='*.egg-info'
        --exclude=.mypy_cache --exclude=.ruff_cache --exclude=.pytest_cache
        --exclude=.hypothesis --exclude=out --exclude='*.sqlite*')
    if command -v rsync >/dev/null; then
        if [ -n "$(rsync -a --delete --itemize-changes "${excludes[@]}" "$SRC/" "$ROOT$DEST/")" ]; then
            say "updated $DEST"
            CHANGED=1
        fi
    else
        # No rsync yet (first run of a dry run): tar copies the same content.
        tar -C "$SRC" "${excludes[@]}" -cf - . | tar -C "$ROOT$DEST" -xf -
    fi
fi

# 4. The venv. --system-site-packages makes apt's picamera2, libcamera,
# NumPy, OpenCV and lgpio importable. pegwatch itself goes in with --no-deps
# and its pure-Python dependencies are installed under a constraints file
# that pins NumPy and Pillow to apt's versions: pip would otherwise fetch
# NumPy 2 (pulled by opencv-python wheels), and apt's picamera2, compiled
# against NumPy 1, fails to import with it.
if [ ! -x "$ROOT$VENV/bin/python" ]; then
    say "creating $VENV"
    run python3 -m venv --system-site-packages "$ROOT$VENV"
    CHANGED=1
fi
constraints=$ROOT$DEST/.apt-constraints.txt
if [ "$DRY_RUN" -eq 0 ]; then
    python3 - >"$constraints.new" <<'PY'
import importlib.metadata as md
for dist in ("numpy", "pillow", "opencv-python", "opencv-python-headless"):
    try:
        print(f"{dist}=={md.version(dist)}")
    except md.PackageNotFoundError:
        pass
PY
    # Debian's python3-opencv has no pip metadata: forbid the wheels outright.
    echo "opencv-python-headless<0" >>"$constraints.new"
    mv "$constraints.new" "$constraints"
fi
pip_deps=("gpiozero>=2.0.1.post3" "luma.core>=2.4" "luma.oled>=3.12" "luma.lcd>=2.10" "RPLCD>=1.3")
if [ "$DRY_RUN" -eq 1 ] || ! "$ROOT$VENV/bin/python" -m pip show -q pegwatch >/dev/null 2>&1 \
    || ! "$ROOT$VENV/bin/python" -c 'import gpiozero, luma.oled, luma.lcd, RPLCD' 2>/dev/null; then
    run "$ROOT$VENV/bin/python" -m pip install --disable-pip-version-check -q \
        -c "$constraints" "${pip_deps[@]}"
    run "$ROOT$VENV/bin/python" -m pip install --disable-pip-version-check -q \
        --no-deps -e "$ROOT$DEST"
fi

# The service cannot write into /opt (ProtectSystem=strict): compile the
# bytecode now so that every start does not compile it again in memory.
run "$ROOT$VENV/bin/python" -m compileall -q "$ROOT$DEST/rules" "$ROOT$DEST/vision" "$ROOT$DEST/device" \
    "$ROOT$DEST/simulation" "$ROOT$DEST/firmware_config"

# 5. The table's configuration: never overwrite an arbiter's edits.
mkdir -p "$ROOT$ETC"
if [ ! -f "$ROOT$ETC/pegwatch.toml" ]; then
    # The shipped file draws the display in the terminal (the desktop's
    # default); under systemd the terminal is the system journal, so a Pi
    # starts with the SSD1306 OLED instead, and saves no picture file.
    first=$(mktemp)
    sed -e '/^\[display\]/,/^\[/ s/^kind = "terminal"$/kind = "ssd1306"/' \
        -e '/^\[display\]/,/^\[/ s/^save = ".*"$/save = ""/' \
        "$SRC/firmware_config/pegwatch.toml" >"$first"
    install -m 0640 "$first" "$ROOT$ETC/pegwatch.toml"
    rm -f "$first"
    say "installed $ETC/pegwatch.toml (edit the players, pins and display there)"
    CHANGED=1
fi
install_file "$SRC/firmware_config/pegwatch.toml" "$ETC/pegwatch.toml.dist" 0644 || true
if getent group "$APP_USER" >/dev/null; then
    if [ "$(stat -c %G "$ROOT$ETC/pegwatch.toml")" != "$APP_USER" ]; then
        run chown "root:$APP_USER" "$ROOT$ETC" "$ROOT$ETC/pegwatch.toml"
        run chmod 0750 "$ROOT$ETC"
    fi
fi

# I2C needs the i2c-dev module for /dev/i2c-* (raspi-config does the same).
printf 'i2c-dev\n' >"${TMPDIR:-/tmp}/pegwatch-modules.$$"
if install_file "${TMPDIR:-/tmp}/pegwatch-modules.$$" "$MODULES" 0644; then
    REBOOT=1
fi
rm -f "${TMPDIR:-/tmp}/pegwatch-modules.$$"

# 6. The unit.
if install_file "$SRC/systemd/pegwatch.service" "$UNIT" 0644; then
    run systemctl daemon-reload
fi
if [ "$DRY_RUN" -eq 1 ] || ! systemctl is-enabled --quiet pegwatch.service 2>/dev/null; then
    run systemctl enable pegwatch.service
fi

# 7. config.txt: the fragment once, between markers; replaced if it changed.
config_txt=""
for candidate in /boot/firmware/config.txt /boot/config.txt; do
    if [ -f "$ROOT$candidate" ]; then
        config_txt=$candidate
        break
    fi
done
if [ -z "$config_txt" ]; then
    say "warning: no /boot/firmware/config.txt or /boot/config.txt; add firmware_config/config.txt.fragment by hand"
else
    file=$ROOT$config_txt
    block=$(printf '%s\n' "$BEGIN_MARK"; cat "$SRC/firmware_config/config.txt.fragment"; printf '%s\n' "$END_MARK")
    current=$(sed -n "\|^# >>> pegwatch >>>|,\|^$END_MARK\$|p" "$file")
    if [ "$current" != "$block" ]; then
        tmp=$(mktemp)
        # Everything outside an old block stays exactly as it was.
        sed "\|^# >>> pegwatch >>>|,\|^$END_MARK\$|d" "$file" >"$tmp"
        printf '\n%s\n' "$block" >>"$tmp"
        cp "$file" "$file.pegwatch-backup"
        cat "$tmp" >"$file"
        rm -f "$tmp"
        say "updated $config_txt (backup: $config_txt.pegwatch-backup)"
        REBOOT=1
        CHANGED=1
    fi
fi

if [ "$CHANGED" -eq 0 ]; then
    say "nothing to change; pegwatch is installed"
fi
if [ "$REBOOT" -eq 1 ]; then
    say "reboot needed for the camera/I2C settings: sudo reboot (pegwatch starts at boot)"
elif [ "$DRY_RUN" -eq 0 ] && ! systemctl is-active --quiet pegwatch.service; then
    say "start it now with: sudo systemctl start pegwatch; follow it with: journalctl -u pegwatch -f"
fi
