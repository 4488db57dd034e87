# Finds cuTENSOR's headers, from the cutensor-cu13 wheel (python3 -m pip install cutensor-cu13) or
# CUTENSOR_ROOT (sys.path too: pip's isolated build environment of `pip install .`). Only the headers are needed at build time: the library is opened at run time.
find_package(Python3 COMPONENTS Interpreter QUIET)
set(_tnrt_cutensor_hints "")
if(DEFINED ENV{CUTENSOR_ROOT})
  list(APPEND _tnrt_cutensor_hints $ENV{CUTENSOR_ROOT}/include)
endif()
if(Python3_Interpreter_FOUND)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c "import site,sys,os\nfor r in site.getsitepackages()+[site.getusersitepackages()]+sys.path:\n  p=os.path.join(r,'cutensor','include')\n  if os.path.isfile(os.path.join(p,'cutensor.h')): print(p); break"
    OUTPUT_VARIABLE _tnrt_py_cutensor OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_tnrt_py_cutensor)
    list(APPEND _tnrt_cutensor_hints ${_tnrt_py_cutensor})
  endif()
endif()
find_path(Cutensor_INCLUDE_DIR cutensor.h HINTS ${_tnrt_cutensor_hints} NO_DEFAULT_PATH)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Cutensor REQUIRED_VARS Cutensor_INCLUDE_DIR)
