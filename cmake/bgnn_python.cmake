# bgnn_python.cmake - the CPython extension bgnn._bgnn (python/src/, limited API: one abi3
# build serves Python >= 3.8), linked with the library's objects (BG_OBJECTS: hidden
# symbols, nothing else to install).  Built when scikit-build-core runs CMake (pip install .
# from the repository root; pyproject.toml; SKBUILD is set) or with -DBGNN_PYTHON=ON.  Under
# pip only the extension is built (everything else leaves the default target) and only the
# "python" component is installed: bgnn/_bgnn.abi3.so beside the package's .py files.
option(BGNN_PYTHON "Build the Python extension bgnn._bgnn" OFF)
if(SKBUILD OR BGNN_PYTHON)
  find_package(Python 3.8 REQUIRED COMPONENTS Interpreter Development.Module ${SKBUILD_SABI_COMPONENT})
  set(BG_PY_SRC ${PROJECT_SOURCE_DIR}/python/src/ext_module.c ${PROJECT_SOURCE_DIR}/python/src/ext_session.c
                ${PROJECT_SOURCE_DIR}/python/src/ext_dlpack.c)
  if(SKBUILD_SABI_COMPONENT)
    python_add_library(_bgnn MODULE WITH_SOABI USE_SABI 3.8 ${BG_PY_SRC})
  else()
    python_add_library(_bgnn MODULE WITH_SOABI ${BG_PY_SRC})
  endif()
  target_sources(_bgnn PRIVATE ${BG_OBJECTS})
  target_include_directories(_bgnn PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(_bgnn PRIVATE ${BG_LIB_DEPS})
  set_target_properties(_bgnn PROPERTIES C_VISIBILITY_PRESET hidden)
  if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    target_link_options(_bgnn PRIVATE -Wl,--version-script=${PROJECT_SOURCE_DIR}/python/src/ext.map)
  endif()
  install(TARGETS _bgnn LIBRARY DESTINATION bgnn COMPONENT python)
  if(SKBUILD)
    set_property(DIRECTORY ${PROJECT_SOURCE_DIR}/tests PROPERTY EXCLUDE_FROM_ALL ON)
    set_target_properties(bgnnc host_jit bgnn bgnn_shared PROPERTIES EXCLUDE_FROM_ALL ON)
  endif()
endif()
