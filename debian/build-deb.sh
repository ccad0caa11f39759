#!/usr/bin/env bash
# Builds the Debian package from a netlens binary with dpkg-deb alone (no
# cargo-deb to install): the binary, the man page, shell completions, the
# exporter's systemd unit and the assets. Prints the package's path.
#
#   debian/build-deb.sh [BINARY]    # default: target/release/netlens
#
# The package's contents are listed once, here; tests/docs/package.rs
# checks that every file it names exists.
set -euo pipefail
cd "$(dirname "$0")/.."

binary=${1:-target/release/netlens}
if [ ! -x "$binary" ]; then
  echo "build-deb: no binary at $binary (cargo build --release first)" >&2
  exit 1
fi
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
arch=$(dpkg --print-architecture)
out=target/debian/netlens_${version}_${arch}.deb

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
# What goes where, and with which mode.
place() { # mode source destination-directory
  install -D -m "$1" "$2" "$root/$3/$(basename "$2")"
}
place 755 "$binary" usr/bin
strip --strip-unneeded "$root/usr/bin/netlens" 2>/dev/null || true
install -d "$root/usr/share/man/man1"
gzip -9n <man/netlens.1 >"$root/usr/share/man/man1/netlens.1.gz"
install -D -m 644 assets/completions/netlens.bash \
  "$root/usr/share/bash-completion/completions/netlens"
place 644 assets/completions/_netlens usr/share/zsh/vendor-completions
place 644 assets/completions/netlens.fish usr/share/fish/vendor_completions.d
place 755 assets/on-finding-webhook.sh usr/share/netlens
for asset in netlens-alerts.yml prometheus.yml grafana-netlens.json; do
  place 644 "assets/$asset" usr/share/netlens
done
place 644 debian/netlens-export.service usr/lib/systemd/system
place 644 README.md usr/share/doc/netlens
# README.md links these pages.
for page in docs/*.md; do
  place 644 "$page" usr/share/doc/netlens/docs
done
cat >"$root/usr/share/doc/netlens/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: netlens

Files: *
Copyright: netlens developers
License: GPL-2.0-only
 On Debian systems the full text is in /usr/share/common-licenses/GPL-2.
EOF
chmod 644 "$root/usr/share/doc/netlens/copyright"

# Depends: the glibc the binary's newest symbol needs, and libgcc_s (as
# dpkg-shlibdeps would say, without needing dpkg-dev).
glibc=$(objdump -T "$binary" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
install -d "$root/DEBIAN"
install -m 755 debian/postinst debian/postrm "$root/DEBIAN/"
{
  echo "Package: netlens"
  echo "Version: $version"
  echo "Architecture: $arch"
  echo "Maintainer: netlens developers"
  echo "Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)"
  echo "Depends: libc6 (>= $glibc), libgcc-s1"
  echo "Section: net"
  echo "Priority: optional"
  echo "Description: An htop-style terminal monitor of the Linux network stack"
  fold -s -w 72 <<'EOF' | sed 's/ *$//; s/^/ /'
netlens shows, on one screen, what ip, ss, netstat -s, sar -n DEV, conntrack, dig and tcpdump show apart: interfaces, sockets and their owners, TCP states and counters, conntrack, DNS latency, a live flow view, the kernel's drop reasons and findings that name the cause. It records sessions for replay and serves the same numbers to Prometheus (netlens export, the netlens-export service).
EOF
} >"$root/DEBIAN/control"

mkdir -p target/debian
rm -f "$out"
# xz at level 1: 2 s where the default level 6 takes 13 s, for a package
# 3% larger (4.6 MB).
dpkg-deb -Zxz -z1 --root-owner-group --build "$root" "$out" >/dev/null
echo "$out"
