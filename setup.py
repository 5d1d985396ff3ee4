from setuptools import setup

setup(cffi_modules=["pyruntime/build_cffi.py:ffibuilder"])
