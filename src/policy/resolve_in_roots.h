// ResolveInRoots: where a path that a protected file names (a symlink's
// text, a `gitdir:` pointer, an include, a hooks path) really leads, without
// ever letting a symlink the sandbox planted steer corral outside the
// writable roots.
//
// Everything below a writable root that is not itself protected may have
// been written by an earlier run: a symlink there is the command's, not the
// user's. If corral followed it on the host, the next run's mount table
// would show whether a host path exists (`a -> /home/alice/.ssh/../../../ws/x`
// resolves only if ~alice/.ssh does), and a pointer could name a FIFO or
// /dev/zero for corral to read. So:
//
//   - the walk is done by hand, one component at a time, on O_PATH
//     descriptors with O_NOFOLLOW; a symlink's text is read and spliced in;
//   - a symlink that lies inside a writable root is followed only while the
//     walk stays inside the roots: the moment a step would leave them
//     (`..` above a root, a name beside a root's ancestors, an absolute
//     target elsewhere), corral stops without looking, and the result is
//     "outside";
//   - outside the roots, the walk may pass only the ancestors of a root, by
//     name, without touching them - unless the caller vouches for the text
//     (Trust::kUser: it comes from a file the sandbox cannot have written,
//     such as a protected `.git` file or a config outside every root). Then
//     the outside part is resolved physically, like the kernel would, until
//     the walk enters a root; from there on the rule above applies.
//
//   Resolved r = ResolveInRoots("/ws/.git/hooks/../../tools/pre-commit", roots, Trust::kUser);
//   if (r.inside) Protect(r.path);
//
// Components after the first missing one are taken lexically ("new/../x" is
// "x"), as git would create them. More than 40 symlinks, like a loop, give
// an empty result.
#pragma once

#include <string>
#include <vector>

namespace corral {

enum class Trust {
  kSandbox,  // the text may be the command's: never look outside the roots
  kUser,     // the text is the user's: resolve outside the roots too
};

struct Resolved {
  // Canonical: every existing component resolved, the rest lexical. Empty
  // when corral stopped looking (the walk left the roots, or looped).
  std::string path;
  bool inside = false;  // path lies in a writable root
  bool exists = false;  // every component of path exists
};

// `path` must be absolute; `roots` absolute and canonical.
Resolved ResolveInRoots(const std::string& path, const std::vector<std::string>& roots, Trust trust);

// Follows the symlink at `link` (canonical, a symlink) one step: its text,
// relative to the link's directory, resolved with `trust`.
Resolved ResolveLink(const std::string& link, const std::vector<std::string>& roots, Trust trust);

}  // namespace corral
