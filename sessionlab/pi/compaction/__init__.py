"""pi's compaction, object at a time: what a valid cut point is and how entries become messages
(:mod:`.rules`), ``prepareCompaction`` (:mod:`.prepare`), compacting a session (:mod:`.compact`) and
the size of pi's summary prompt (:mod:`.summary_prompt`). The vectorised cut points and the
what-if simulation over tables live in :mod:`sessionlab.compaction`.
"""
