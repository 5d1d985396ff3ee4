from setuptools import setup

setup(cffi_modules=["pyruntime/build_cffi.py:ffibuilder", "compiler/boosting/build_histboost.py:ffibuilder"])
