"""``python -m power_bench ...`` runs the ``power`` command group."""

from .cli import power

if __name__ == "__main__":
    power(prog_name="python -m power_bench")
