# Sphinx configuration for the rocks_autotune admin guide (tox -e docs).
# Plain Sphinx, no Ceph extensions: the pages use Ceph's RST style but only
# standard directives, so they also drop into ceph.git's doc/ tree.
project = 'rocks_autotune'
author = 'rocks_autotune developers'
master_doc = 'index'
exclude_patterns = ['_build']
extensions: list = []
html_theme = 'alabaster'
