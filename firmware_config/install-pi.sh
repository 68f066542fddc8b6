#!/usr/bin/env bash
# Install pegwatch as a service on Raspberry Pi OS Bookworm (Pi 5, Pi 4, Pi 3 B+, Zero 2 W).
#
#   sudo firmware_config/install-pi.sh            install, or upgrade in place
#   firmware_config/install-pi.sh --dry-run       print what would change; change nothing
#
# Options: --dry-run (-n); --source DIR (a pegwatch checkout, default this
# script's); --root DIR (write under DIR instead of /, for trying it out;
# also $PEGWATCH_ROOT); --pi-model "Raspberry Pi 5 Model B" (instead of
# /proc/device-tree/model; also $PEGWATCH_PI_MODEL).
#
# Idempotent: a second run changes nothing. An upgrade replaces the code and
# keeps the table's configuration (/etc/pegwatch/pegwatch.toml) and its
# journal (/var/lib/pegwatch). It
#   1. installs the missing apt packages (picamera2, OpenCV, NumPy, lgpio, ...;
#      on a Pi 5 also python3-rpi-lgpio, which SPI displays need),
#   2. creates the system user "pegwatch" in the gpio, video, i2c, spi groups,
#   3. copies the checkout to /opt/pegwatch (the docs the unit names, and the
#      source the package is built from),
#   4. makes a venv there WITH the system site-packages and installs pegwatch
#      into it as a regular (non-editable) package, without letting pip
#      replace apt's NumPy (see step 4),
#   5. installs /etc/pegwatch/pegwatch.toml if there is none (an arbiter's
#      edits are never overwritten; the shipped file goes to .dist beside it),
#   6. installs and enables systemd/pegwatch.service,
#   7. adds firmware_config/config.txt.fragment to config.txt once, between
#      marker lines (written to a temporary file beside it, synced, renamed;
#      the previous file kept as config.txt.pegwatch-backup), and says when a
#      reboot is needed.
#
# With --dry-run nothing is written anywhere (not even a temporary file):
# every file that would be written, every package that would be installed
# and every command that would be run is printed, with a diff of config.txt.
set -euo pipefail
# write_file reads its content from a pipe: run it in this shell, not a subshell.
shopt -s lastpipe

ROOT=${PEGWATCH_ROOT:-}
PI_MODEL=${PEGWATCH_PI_MODEL:-}
DRY_RUN=0
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run | -n) DRY_RUN=1 ;;
        --source | --root | --pi-model)
            [ $# -ge 2 ] || { echo "install-pi.sh: $1 needs a value" >&2; exit 2; }
            case "$1" in
                --source) SRC=$(cd "$2" && pwd) ;;
                --root) ROOT=$2 ;;
                --pi-model) PI_MODEL=$2 ;;
            esac
            shift
            ;;
        -h | --help) usage; exit 0 ;;
        *) echo "install-pi.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done
ROOT=${ROOT%/}

APP_USER=pegwatch
APP_GROUPS=(gpio video i2c spi)
DEST=/opt/pegwatch
VENV=$DEST/.venv
STAMP=$VENV/.pegwatch-installed
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
PIP_DEPS=("gpiozero>=2.0.1.post3" "luma.core>=2.4" "luma.oled>=3.12" "luma.lcd>=2.10" "RPLCD>=1.3")

REBOOT=0
CHANGED=0
CODE_CHANGED=0

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

# Write standard input to $1 (under ROOT) when it is missing or different,
# with mode $2 ("-" on the FAT boot partition, which has no modes): a
# temporary file in the same directory (so on the same filesystem), flushed
# to the disk, then renamed over the old one, so that a power cut leaves
# either the old file or the new one, never half of one. Sets WROTE to 1 if
# it had to write (under --dry-run: would have), else 0.
WROTE=0
write_file() {
    local dest=$ROOT$1 mode=$2 content tmp dir
    content=$(cat; printf x)
    content=${content%x}
    WROTE=0
    if [ -f "$dest" ] && [ "$(cat "$dest"; printf x)" = "${content}x" ]; then
        return 0
    fi
    WROTE=1
    CHANGED=1
    if [ "$DRY_RUN" -eq 1 ]; then
        say "would write $1${mode:+ (mode $mode)}"
        return 0
    fi
    dir=$(dirname "$dest")
    mkdir -p "$dir"
    tmp=$(mktemp "$dir/.$(basename "$dest").XXXXXX")
    printf '%s' "$content" >"$tmp"
    if [ "$mode" != "-" ]; then
        chmod "$mode" "$tmp"
    fi
    sync "$tmp"
    mv -f "$tmp" "$dest"
    sync "$dir"
    say "installed $1"
}

if [ "$DRY_RUN" -eq 0 ] && [ -z "$ROOT" ] && [ "$(id -u)" -ne 0 ]; then
    echo "install-pi.sh: run as root (sudo $0), or try --dry-run" >&2
    exit 2
fi
for f in systemd/pegwatch.service firmware_config/pegwatch.toml firmware_config/config.txt.fragment pyproject.toml; do
    if [ ! -f "$SRC/$f" ]; then
        echo "install-pi.sh: $SRC/$f is missing; run from a pegwatch checkout or pass --source" >&2
        exit 2
    fi
done
if [ -z "$PI_MODEL" ] && [ -r /proc/device-tree/model ]; then
    PI_MODEL=$(tr -d '\0' </proc/device-tree/model)
fi
case "$PI_MODEL" in
    "Raspberry Pi 5"* | "Raspberry Pi Compute Module 5"*)
        # luma drives the DC and RST lines of SPI displays through RPi.GPIO,
        # which cannot reach a Pi 5's GPIO (the RP1 chip); rpi-lgpio is the
        # same API on lgpio. The default I2C OLED does not need it.
        APT_PACKAGES+=(python3-rpi-lgpio)
        ;;
    "Raspberry Pi"*) ;;
    "") say "warning: not a Raspberry Pi (no /proc/device-tree/model); installing anyway" ;;
    *) say "warning: $PI_MODEL is not a Raspberry Pi; installing anyway" ;;
esac
[ -n "$PI_MODEL" ] && say "model: $PI_MODEL"

# 1. apt packages: only the missing ones, so a re-run does not touch apt.
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$pkg")
    fi
done
if [ ${#missing[@]} -gt 0 ]; then
    [ "$DRY_RUN" -eq 1 ] && say "would install apt packages: ${missing[*]}"
    run apt-get update
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
    CHANGED=1
fi

# 2. The service user: a system account with no login, its home the state dir.
if ! getent passwd "$APP_USER" >/dev/null; then
    [ "$DRY_RUN" -eq 1 ] && say "would create the system user $APP_USER"
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

# 3. The code, owned by root: the service may read it, not change it. The
# copy is made file by file, each written beside its target and renamed;
# files gone from the checkout are removed, everything else is left alone.
# python3 (from step 1) does it, so it is the same with or without rsync.
copied=$(python3 - "$SRC" "$ROOT$DEST" "$DRY_RUN" <<'PY'
import filecmp, hashlib, os, shutil, sys
src, dest, dry = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
# The checkout's fingerprint (last line): what step 4 records as installed.
fingerprint = hashlib.sha256()
skip_dirs = {".venv", ".git", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache",
             ".hypothesis", "out", "build", "dist"}
def skipped(name):
    return name.endswith((".egg-info", ".pyc")) or ".sqlite" in name
same = os.path.realpath(src) == os.path.realpath(dest)
wanted = set()
for top, dirs, files in os.walk(src):
    dirs[:] = sorted(d for d in dirs if d not in skip_dirs and not skipped(d))
    rel = os.path.relpath(top, src)
    for name in sorted(files):
        if skipped(name):
            continue
        path = os.path.normpath(os.path.join(rel, name))
        wanted.add(path)
        with open(os.path.join(top, name), "rb") as f:
            fingerprint.update(path.encode() + b"\0" + hashlib.sha256(f.read()).digest())
        target = os.path.join(dest, path)
        if same or os.path.isfile(target) and filecmp.cmp(os.path.join(top, name), target, shallow=False):
            continue
        print(f"{'would copy' if dry else 'copied'} {path}")
        if not dry:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            tmp = target + ".pegwatch-new"
            shutil.copy2(os.path.join(top, name), tmp)
            os.replace(tmp, target)
if os.path.isdir(dest) and not same:
    for top, dirs, files in os.walk(dest):
        dirs[:] = [d for d in dirs if d not in skip_dirs and not skipped(d)]
        for name in files:
            path = os.path.normpath(os.path.relpath(os.path.join(top, name), dest))
            if path not in wanted and not skipped(name) and not path.startswith(".apt-constraints"):
                print(f"{'would remove' if dry else 'removed'} {path}")
                if not dry:
                    os.remove(os.path.join(top, name))
print("fingerprint", fingerprint.hexdigest())
PY
)
source_fingerprint=${copied##*fingerprint }
copied=$(printf '%s\n' "$copied" | sed '/^fingerprint /d')
if [ -n "$copied" ]; then
    printf '%s\n' "$copied" | sed "s|^|install-pi.sh:   |"
    say "$( [ "$DRY_RUN" -eq 1 ] && echo "would update" || echo "updated") $DEST ($(printf '%s\n' "$copied" | wc -l) files)"
    CHANGED=1
    CODE_CHANGED=1
fi

# 4. The venv. --system-site-packages makes apt's picamera2, libcamera,
# NumPy, OpenCV and lgpio importable. pegwatch is built from /opt/pegwatch
# and installed as a regular package (not editable: the venv holds its own
# copy, byte-compiled by pip, and an upgrade replaces it whole). It goes in
# with --no-deps; its pure-Python dependencies are installed under a
# constraints file that pins NumPy and Pillow to apt's versions: pip would
# otherwise fetch NumPy 2 (pulled by opencv-python wheels), and apt's
# picamera2, compiled against NumPy 1, fails to import with it.
if [ ! -x "$ROOT$VENV/bin/python" ]; then
    run python3 -m venv --system-site-packages "$ROOT$VENV"
    CHANGED=1
fi
constraints=$(python3 - <<'PY'
import importlib.metadata as md
for dist in ("numpy", "pillow", "opencv-python", "opencv-python-headless"):
    try:
        print(f"{dist}=={md.version(dist)}")
    except md.PackageNotFoundError:
        pass
# Debian's python3-opencv has no pip metadata: forbid the wheels outright.
print("opencv-python-headless<0")
PY
)
printf '%s\n' "$constraints" | write_file "$DEST/.apt-constraints.txt" 0644
# What is installed is recorded with the checkout's fingerprint: the same
# code and the same dependencies are not installed twice.
fingerprint=$(printf '%s\n' "$source_fingerprint" "${PIP_DEPS[@]}" "$constraints" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$ROOT$STAMP" 2>/dev/null || true)" != "$fingerprint" ]; then
    run "$ROOT$VENV/bin/python" -m pip install --disable-pip-version-check -q \
        -c "$ROOT$DEST/.apt-constraints.txt" "${PIP_DEPS[@]}"
    run "$ROOT$VENV/bin/python" -m pip install --disable-pip-version-check -q \
        --no-deps --force-reinstall "$ROOT$DEST"
    printf '%s\n' "$fingerprint" | write_file "$STAMP" 0644
    CHANGED=1
    CODE_CHANGED=1
fi

# 5. The table's configuration: never overwrite an arbiter's edits.
if [ ! -f "$ROOT$ETC/pegwatch.toml" ]; then
    # The shipped file draws the display in the terminal (the desktop's
    # default); under systemd the terminal is the system journal, so a Pi
    # starts with the SSD1306 OLED instead, and saves no picture file.
    sed -e '/^\[display\]/,/^\[/ s/^kind = "terminal"$/kind = "ssd1306"/' \
        -e '/^\[display\]/,/^\[/ s/^save = ".*"$/save = ""/' \
        "$SRC/firmware_config/pegwatch.toml" | write_file "$ETC/pegwatch.toml" 0640
    say "edit the players, pins and display in $ETC/pegwatch.toml"
fi
write_file "$ETC/pegwatch.toml.dist" 0644 <"$SRC/firmware_config/pegwatch.toml"
if getent group "$APP_USER" >/dev/null; then
    if [ ! -f "$ROOT$ETC/pegwatch.toml" ] || [ "$(stat -c %G "$ROOT$ETC/pegwatch.toml")" != "$APP_USER" ]; then
        run chown "root:$APP_USER" "$ROOT$ETC" "$ROOT$ETC/pegwatch.toml"
        run chmod 0750 "$ROOT$ETC"
    fi
fi

# I2C needs the i2c-dev module for /dev/i2c-* (raspi-config does the same).
printf 'i2c-dev\n' | write_file "$MODULES" 0644
if [ "$WROTE" -eq 1 ]; then
    REBOOT=1
fi

# 6. The unit.
write_file "$UNIT" 0644 <"$SRC/systemd/pegwatch.service"
if [ "$WROTE" -eq 1 ]; then
    run systemctl daemon-reload
    CODE_CHANGED=1
fi
if ! systemctl is-enabled --quiet pegwatch.service 2>/dev/null; then
    run systemctl enable pegwatch.service
    CHANGED=1
fi
if [ "$CODE_CHANGED" -eq 1 ]; then
    # A table already running gets the new code; a stopped one stays stopped.
    run systemctl try-restart pegwatch.service
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
        # Everything outside an old block stays exactly as it was.
        wanted=$(sed "\|^# >>> pegwatch >>>|,\|^$END_MARK\$|d" "$file"; printf '\n%s\nx' "$block")
        wanted=${wanted%x}
        if [ "$DRY_RUN" -eq 1 ]; then
            say "would change $config_txt (backup: $config_txt.pegwatch-backup):"
            diff -u --label "$config_txt" --label "$config_txt (new)" "$file" - <<<"${wanted%$'\n'}" || true
        else
            # The FAT boot partition: the backup first, then the new file
            # beside the old one, flushed, and renamed over it.
            cp "$file" "$file.pegwatch-backup"
            sync "$file.pegwatch-backup"
            say "kept the previous $config_txt as $config_txt.pegwatch-backup"
        fi
        printf '%s' "$wanted" | write_file "$config_txt" - >/dev/null
        [ "$DRY_RUN" -eq 0 ] && say "updated $config_txt"
        REBOOT=1
        CHANGED=1
    fi
fi

if [ "$CHANGED" -eq 0 ]; then
    say "nothing to change; pegwatch is installed"
elif [ "$DRY_RUN" -eq 1 ]; then
    say "dry run: nothing was changed"
fi
if [ "$REBOOT" -eq 1 ]; then
    say "reboot needed for the camera/I2C settings: sudo reboot (pegwatch starts at boot)"
elif [ "$DRY_RUN" -eq 0 ] && ! systemctl is-active --quiet pegwatch.service; then
    say "start it now with: sudo systemctl start pegwatch; follow it with: journalctl -u pegwatch -f"
fi
