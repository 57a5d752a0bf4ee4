"""Map the top-level folders cores/ soc/ formal/ boards/ into the hhe_gen package.

Metadata lives in pyproject.toml.  The package list is computed with find_packages for every
mapped folder, so a new subpackage can never be silently left out of the wheel.
"""
from setuptools import find_packages, setup

MAPPED = {
    "hhe_gen": "hhe_gen",
    "hhe_gen.cores": "cores",
    "hhe_gen.soc": "soc",
    "hhe_gen.formal": "formal",
    "hhe_gen.boards": "boards",
}

packages, package_dir = [], {}
for name, folder in MAPPED.items():
    package_dir[name] = folder
    packages.append(name)
    packages += [f"{name}.{sub}" for sub in find_packages(where=folder)]

setup(
    packages=packages,
    package_dir=package_dir,
    package_data={
        "hhe_gen": ["data/kat/rubato/*.json", "data/kat/rubato/*.md"],
        "hhe_gen.formal": ["**/*.sby"],
        "hhe_gen.soc": ["firmware/*.c", "firmware/*.ld", "firmware/Makefile"],
        "hhe_gen.host.lattigo_peer": ["*.go", "go.mod", "go.sum"],
    },
    include_package_data=False,
)
