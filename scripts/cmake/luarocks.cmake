# SPDX-License-Identifier: MIT
# The LuaRocks build (scripts/mplua-*.rockspec, -DMPLUA_LUAROCKS=ON): mp.so
# and ad.so as self-contained Lua modules, installed with the Lua library
# into the directories luarocks names. mp.so holds the whole runtime (the
# library's objects); ad.so the autodiff module alone (no MPI). A state that
# loads mp gets `ad` from mp.so (package.loaded.ad), so one copy serves both.
# mp.fft's FFTW plug-in goes beside them as mplua/fftw.so when FFTW was found
# (MPLUA_FFTW, as in the full build).
set(MPLUA_LUA_CDIR "" CACHE PATH "Where mp.so and ad.so go (luarocks: $(LIBDIR))")
set(MPLUA_LUA_DIR "" CACHE PATH "Where the Lua library goes, as mplua/*.lua (luarocks: $(LUADIR))")
if(NOT MPLUA_LUA_CDIR OR NOT MPLUA_LUA_DIR)
  message(FATAL_ERROR "MPLUA_LUAROCKS needs MPLUA_LUA_CDIR and MPLUA_LUA_DIR")
endif()
add_library(mplua_rock_mp MODULE ${MPLUA_OBJECTS})
target_link_libraries(mplua_rock_mp PRIVATE MPI::MPI_C Threads::Threads m ${CMAKE_DL_LIBS}
  mplua_flags)
# never unloaded (MPI's exit-time handlers stay mapped), calls bind inside
target_link_options(mplua_rock_mp PRIVATE -Wl,-z,nodelete -Wl,-Bsymbolic-functions)
add_library(mplua_rock_ad MODULE interp/admod.c) # with the objects it links
target_include_directories(mplua_rock_ad PRIVATE ${MPLUA_GEN}/include ${MPI_C_INCLUDE_DIRS})
target_link_libraries(mplua_rock_ad PRIVATE mplua_ad mplua_nompi mplua_flags)
set_target_properties(mplua_rock_ad PROPERTIES C_VISIBILITY_PRESET hidden)
set_target_properties(mplua_rock_mp PROPERTIES OUTPUT_NAME mp PREFIX "")
set_target_properties(mplua_rock_ad PROPERTIES OUTPUT_NAME ad PREFIX "")
install(TARGETS mplua_rock_mp mplua_rock_ad LIBRARY DESTINATION ${MPLUA_LUA_CDIR})
if(MPLUA_HAVE_FFTW)
  install(TARGETS mplua_fftw LIBRARY DESTINATION ${MPLUA_LUA_CDIR}/mplua)
endif()
file(GLOB MPLUA_LUA_LIB CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/lib/*.lua)
install(FILES ${MPLUA_LUA_LIB} DESTINATION ${MPLUA_LUA_DIR}/mplua)
