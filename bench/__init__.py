"""Benchmarks of chunkweave and its peers, run from the repository root as ``python -m bench.X``.

Each ``bench/X.py`` with a ``main`` is a script (see ``bench/README.md`` for what each
measures and how it is run); the others are the modules they share: ground truth and
its loaders (:mod:`bench.groundtruth`), the views systems are reduced to
(:mod:`bench.views`), the scores (:mod:`bench.scoring`), the adapters of the systems
under test (:mod:`bench.peers`, :mod:`bench.peer_chunkers`, :mod:`bench.chunkers`,
:mod:`bench.retrieval_chunkers`) and how a system runs in a child process
(:mod:`bench.worker_protocol`).
"""
