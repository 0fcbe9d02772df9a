// The dangerous-command classifier behind the ask-dangerous approval policies.
//
// ClassifyDangerousCommand looks at a command's argv (never running it) and
// says whether it belongs to a class a person should approve first, and why.
//
//   ClassifyDangerousCommand({"git", "push", "origin"})  -> category "git-push"
//   ClassifyDangerousCommand({"ls", "-la"})              -> nullopt (not dangerous)
//
// Categories (the program is matched by its basename, so /bin/rm is rm):
//   empty-command          an empty argv
//   privilege              sudo su doas pkexec runuser run0
//   rm-recursive-or-force  rm with -r/-R/-f (in any flag cluster) or --recursive,
//                          --force, --no-preserve-root (or a prefix of them)
//   destroy-data           shred truncate wipefs blkdiscard; mv with
//                          /dev/null as source or target; cp /dev/null FILE
//                          (`cat /dev/null > f` is a shell redirection: see
//                          unparsed-shell)
//   bulk-delete            xargs with rm, unlink, rmdir, shred or truncate
//                          anywhere in its arguments (erring: `xargs grep
//                          rm` counts too), and find -exec/-execdir/-ok
//                          running one of them; archivers deleting what
//                          they archive (tar --remove-files, zip -m, 7z -sdel)
//   disk                   dd, mkfs and mkfs.*, mke2fs mkswap fdisk sfdisk
//                          parted sgdisk losetup mount umount
//   recursive-permissions  chmod chown chgrp with -R or --recursive
//   network-transfer       curl wget aria2c nc ncat netcat socat telnet ftp (any use)
//   remote-access          ssh scp sftp rsync sshpass (any use)
//   git-push, git-reset-hard, git-clean, git-branch-force-delete,
//   git-stash-drop, git-rewrite-history (filter-branch, filter-repo),
//   git-discard-changes    git checkout with paths (`-- <path>`, `.`, a glob,
//                          --ours/--theirs, --pathspec-from-file) or -f,
//                          git restore unless it is --staged alone, git
//                          switch -f/--discard-changes; a branch checkout
//                          (`git checkout topic`) stays safe
//   git-delete-ref         git update-ref -d or --stdin
//   git-config-override    git -c / --config-env / --exec-path=, and any
//                          `git config` that is not a --get/--list read
//   package-publish        npm/pnpm/bun publish and unpublish, yarn publish,
//                          cargo publish/yank/owner, uv/poetry/flit/hatch
//                          publish, twine upload, gem push/yank,
//                          docker/podman push, mvn deploy, gradle publish.
//                          (pip has no publish command: Python uploads go
//                          through the tools listed.)
//   system                 reboot shutdown halt poweroff systemctl service
//                          init telinit killall pkill crontab iptables
//                          ip6tables nft insmod rmmod modprobe useradd
//                          userdel usermod passwd chpasswd visudo
//   find-delete            find with -delete (find -exec runs the command
//                          after it through this classifier)
//   inline-code            python* -c, perl/ruby/lua/Rscript/osascript -e,
//                          node/deno -e/--eval/-p, php -r, awk programs that
//                          call system(), getline or pipe/redirect
//   unparsed-shell         a shell (sh bash zsh dash ksh mksh ash fish csh
//                          tcsh) -c string with quoting, substitution,
//                          redirection, globbing or escapes; eval, source,
//                          `.`, env -S, watch and git submodule foreach
//   shell-script           a shell running a script file or its stdin
//   too-complex            nesting deeper than 6 levels, more than 1024
//                          arguments, or a -c string over 64 KiB
// A plain shell -c string (words and ; & | separators only) is split and
// each command classified. Wrappers (env nice nohup timeout time command
// exec builtin stdbuf ionice setsid xargs busybox chrt taskset unbuffer
// strace ltrace chronic nsenter unshare chroot flock) are seen through:
// every later argument is tried as the start of the wrapped command.
//
// Not asked, on purpose: build and install commands (make, npm install,
// cargo build, pip install, ...). They run arbitrary project code, but that
// is an agent's ordinary work: asking before each would teach people to say
// yes without reading. The sandbox's confinement, not this list, bounds
// what that code can reach.
//
// Security: this is a tripwire for asking, not a sandbox. It errs towards
// "dangerous" (anything it cannot parse is), and a command it passes still
// runs inside the confinement the policy gives it.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace corral {

struct CommandDanger {
  std::string category;  // a stable label from the list above
  std::string reason;    // a sentence for the person asked
};

std::optional<CommandDanger> ClassifyDangerousCommand(std::span<const std::string> argv);
inline std::optional<CommandDanger> ClassifyDangerousCommand(const std::vector<std::string>& argv) {
  return ClassifyDangerousCommand(std::span<const std::string>(argv));
}
bool IsDangerousCommand(std::span<const std::string> argv);
inline bool IsDangerousCommand(const std::vector<std::string>& argv) {
  return IsDangerousCommand(std::span<const std::string>(argv));
}

}  // namespace corral
