import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', '..', 'src', 'pybind', 'mgr'))
# Ceph's real mgr_module.py and orchestrator package, from the ceph-mgr package
sys.path.append('/usr/share/ceph/mgr')
