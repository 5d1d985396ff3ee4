from setuptools import setup

setup(cffi_modules=["pyruntime/build_cffi.py:make_ffi", "compiler/boosting/build_histboost.py:ffibuilder"])
