# The Debian package (scripts/package.sh): build/podtopo_<version>_amd64.deb with CPack.
# It holds /usr/bin/podtopo, /usr/bin/podtopo-agent (the agent alone, which the systemd unit and
# the DaemonSet run), the man page, bash/zsh/fish completions and a systemd unit for the agent. Depends comes from dpkg-shlibdeps (CPACK_DEBIAN_PACKAGE_SHLIBDEPS), never by
# hand.
include(GNUInstallDirs)
install(TARGETS podtopo podtopo-agent RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_SOURCE_DIR}/packaging/podtopo.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/completions/podtopo.bash
        DESTINATION share/bash-completion/completions RENAME podtopo)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/completions/_podtopo
        DESTINATION share/zsh/vendor-completions)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/completions/podtopo.fish
        DESTINATION share/fish/vendor_completions.d)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/podtopo-agent.service DESTINATION /lib/systemd/system)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/podtopo-agent.default DESTINATION /etc/default
        RENAME podtopo-agent)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME podtopo)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "the kubelet's Topology, CPU and Memory Managers (v1.37): predict, explain, repair, watch")
set(CPACK_PACKAGE_DESCRIPTION
    "podtopo predicts and explains kubelet admission (Topology Manager, CPU Manager static, Memory Manager Static, pod-level resource managers), draws the node, checks and repairs kubelet checkpoints, and runs a node agent that exports Prometheus metrics and NodeResourceTopology objects.")
set(CPACK_PACKAGE_CONTACT "podtopo maintainers <podtopo@localhost>")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "podtopo maintainers <podtopo@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # podtopo_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_OUTPUT_FILE_PREFIX ${CMAKE_BINARY_DIR})
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_SOURCE_DIR}/packaging/conffiles)
include(CPack)
