// Anchor of the precompiled header shared by every test executable (see cmake/podtopo.cmake).
