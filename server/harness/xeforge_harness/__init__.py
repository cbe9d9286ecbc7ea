"""xeforge verification harness: is a Triton kernel rewrite correct, and is it faster?

See server/harness/README.md for the command line, the serve protocol and the result contract this
package implements, and docs/harness-threat-model.md for what it defends against.
"""

__version__ = "0.1.0"
