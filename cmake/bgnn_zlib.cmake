# bgnn_zlib.cmake - zlib, optional: deflate-compressed .npz graphs (scipy.sparse.save_npz's
# default; loaders/io_zip.c).  Without it (-DBGNN_ZLIB=OFF, or zlib1g-dev missing) bgnn still
# reads stored (uncompressed) .npz archives and says how to get the rest.
option(BGNN_ZLIB "Use zlib for compressed .npz graphs when found" ON)
set(BG_ZLIB_FOUND OFF)
if(BGNN_ZLIB)
  find_package(ZLIB QUIET)
  if(ZLIB_FOUND)
    set(BG_ZLIB_FOUND ON)
    target_compile_definitions(bg_loaders PRIVATE BG_HAVE_ZLIB=1)
    target_link_libraries(bg_loaders PRIVATE ZLIB::ZLIB) # its headers
    target_compile_definitions(bgnn PUBLIC $<BUILD_INTERFACE:BG_HAVE_ZLIB=1>)
    target_link_libraries(bgnn PUBLIC ZLIB::ZLIB)
  else()
    message(STATUS "bgnn: zlib not found; compressed .npz graphs unsupported (install zlib1g-dev)")
  endif()
endif()
