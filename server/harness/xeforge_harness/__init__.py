"""xeforge verification harness: is a Triton kernel rewrite correct, and is it faster?

See server/harness/README.md for the command line and the serve protocol, and
/work/shared/harness.md for the contract this package implements.
"""

__version__ = "0.1.0"
