# SPDX-License-Identifier: Apache-2.0
# Sourced by deps.sh and cross-deps.sh: fetch Debian source packages through a private apt
# configuration under $BUILD_DIR (the machine's own apt configuration is never changed).
# Needs BUILD_DIR (absolute) and a log function from the caller.

# The mirror the machine already uses (deb822 .sources first, then the one-line format).
debian_mirror() {
  local uri=""
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    uri=$(awk '/^URIs:/ && $2 ~ /debian\/?$/ {print $2; exit}' "$f")
    [ -n "$uri" ] && break
  done
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1=="deb" && $0 !~ /security/ {for(i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list)
  fi
  [ -n "$uri" ] || { echo "deps: cannot find a Debian mirror in the apt sources" >&2; exit 1; }
  printf '%s\n' "${uri%/}"
}

# fetch_source PACKAGE SUITE DESTDIR: apt-get source --download-only through a private config.
fetch_source() {
  local pkg=$1 suite=$2 dest=$3 apt_dir="$BUILD_DIR/apt/$2"
  mkdir -p "$apt_dir/lists/partial" "$dest"
  printf 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
    "$(debian_mirror)" "$suite" >"$apt_dir/sources.list"
  local opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
              -o "Dir::State::Lists=$apt_dir/lists" -o Dir::Cache::archives="$apt_dir")
  if ! ls "$apt_dir/lists/"*Sources* >/dev/null 2>&1; then
    apt-get "${opts[@]}" update -q || log "source index update for $suite partly failed"
  fi
  (cd "$dest" && apt-get "${opts[@]}" source --download-only "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
  verify_dsc "$dest"/"${pkg%%=*}"_*.dsc
}

# Check every file a .dsc lists against its SHA-256 (apt already checked the .dsc itself
# against the signed Sources index).
verify_dsc() {
  local dsc=$1 dir; dir=$(dirname "$dsc")
  awk '/^Checksums-Sha256:/{on=1; next} /^[^ ]/{on=0} on && NF==3 {print $1 "  " $3}' "$dsc" |
    (cd "$dir" && sha256sum --quiet -c -) || { echo "deps: checksum mismatch in $dsc" >&2; exit 1; }
}
