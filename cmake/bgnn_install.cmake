# bgnn_install.cmake - the shared library and everything `cmake --install` puts in place:
#   bin/bgnnc                          the CLI (linked statically with libbgnn)
#   lib/libbgnn.so.0.1.0 (+ .so.0.1, .so) the shared library; SONAME libbgnn.so.0.1 (before
#                                      1.0 a minor release may change the ABI)
#   lib/libbgnn.a                      the static library (+ -lm -ldl -lpthread [-lz])
#   include/bgnn/bgnn.h                the one public header
#   lib/cmake/bgnn/                    find_package(bgnn CONFIG): bgnn::bgnn (shared),
#                                      bgnn::bgnn_static
#   lib/pkgconfig/bgnn.pc              pkg-config bgnn (relocatable: paths from the .pc itself)
# The shared library is made of the layers' objects (BG_OBJECTS, CMakeLists.txt: position
# independent, every symbol hidden), like the static one; only the API marked BGNN_API
# (visibility default) in bgnn.h is exported, which tests/install/check_exports.cmake checks
# with nm -D.  The Python extension (cmake/bgnn_python.cmake) links the same objects.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(BG_LIB_DEPS m ${CMAKE_DL_LIBS} pthread)
if(BG_ZLIB_FOUND)
  list(APPEND BG_LIB_DEPS ZLIB::ZLIB)
endif()

add_library(bgnn_shared SHARED ${BG_OBJECTS})
set_target_properties(bgnn_shared PROPERTIES OUTPUT_NAME bgnn EXPORT_NAME bgnn
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
target_link_libraries(bgnn_shared PRIVATE ${BG_LIB_DEPS})
if(NOT BGNN_SANITIZE AND NOT BGNN_FUZZ AND CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  target_link_options(bgnn_shared PRIVATE -Wl,--no-undefined)
endif()
target_include_directories(bgnn_shared INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
add_library(bgnn::bgnn ALIAS bgnn_shared)

# The static library (tests link it for the internal bg_* functions): installed with the
# public header only; its build-tree include directories stay out of the export.
get_target_property(BG_STATIC_INC bgnn INTERFACE_INCLUDE_DIRECTORIES)
set_property(TARGET bgnn PROPERTY INTERFACE_INCLUDE_DIRECTORIES
  "$<BUILD_INTERFACE:${BG_STATIC_INC}>;$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
set_target_properties(bgnn PROPERTIES EXPORT_NAME bgnn_static)

install(TARGETS bgnnc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS bgnn_shared bgnn EXPORT bgnnTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/bgnn/bgnn.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/bgnn)
install(EXPORT bgnnTargets NAMESPACE bgnn:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/bgnn)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/bgnnConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/bgnnConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/bgnn)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/bgnnConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/bgnnConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/bgnnConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/bgnn)
file(RELATIVE_PATH BG_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/") # "../.." for lib
string(REGEX REPLACE "/$" "" BG_PC_TO_PREFIX "${BG_PC_TO_PREFIX}")
set(BG_PC_REQUIRES_PRIVATE "")
if(BG_ZLIB_FOUND)
  set(BG_PC_REQUIRES_PRIVATE "zlib")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/bgnn.pc.in ${CMAKE_CURRENT_BINARY_DIR}/bgnn.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/bgnn.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The shared library exports exactly the bgnn_* API (nm -D), and every BGNN_API of bgnn.h.
add_test(NAME install.exports COMMAND ${CMAKE_COMMAND} -DLIB=$<TARGET_FILE:bgnn_shared>
  -DHEADER=${PROJECT_SOURCE_DIR}/include/bgnn/bgnn.h -P ${PROJECT_SOURCE_DIR}/tests/install/check_exports.cmake)
set_tests_properties(install.exports PROPERTIES LABELS install)
# Install into a temporary prefix and build outside programs against it (CMake package and
# pkg-config); not in sanitizer or fuzz builds (their library needs the sanitizer runtime).
if(NOT BGNN_SANITIZE AND NOT BGNN_FUZZ)
  add_test(NAME install.consumers COMMAND ${PROJECT_SOURCE_DIR}/tests/install/run.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(install.consumers PROPERTIES LABELS install SKIP_RETURN_CODE 77
    ENVIRONMENT "BGNN_DATA_DIR=${BG_SHARED_DATA}")
endif()
