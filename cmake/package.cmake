# The Debian package: `cpack -G DEB` in a build directory (or
# `cmake --build BUILD --target package`) makes corral_VERSION_ARCH.deb of
# what `cmake --install` installs (src/CMakeLists.txt): the binary,
# libcorral.so, the C header and corral.pc, under /usr. Depends is what
# dpkg-shlibdeps reads from the binaries: libc6 alone where libseccomp and
# libcrypto are linked statically (their archives were found), else also
# libseccomp2 and libssl3. tests/install/install_test.sh builds and checks it.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "corral")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "corral")
set(CPACK_PACKAGE_CONTACT "corral maintainers <corral@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "security-first sandbox for the commands AI coding agents run")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "corral runs a command in namespaces, a fresh root, Landlock and seccomp, fails closed where the host cannot\n"
    "give a guarantee, and reports and audits what it enforced. Includes libcorral (the C API), its header and\n"
    "its pkg-config file.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME "DEB-DEFAULT")
set(CPACK_DEBIAN_PACKAGE_SECTION "utils")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libcorral.so.0 is in the package itself: no shlibs file, so dpkg-shlibdeps
# is told where it is rather than searching the system for it.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
