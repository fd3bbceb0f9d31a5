"""pi's session system, object at a time and exact: the seed's entry model (:mod:`.model`), pi's
file formats (:mod:`.io`: v1-v4 and the seed's snake_case dialect), context building
(:mod:`.context`), token estimates (:mod:`.tokens`), storages, sessions and repos
(:mod:`.storage`, :mod:`.session`, :mod:`.repo`), pi's release rules (:mod:`.rules`) and pi's
compaction (:mod:`.compaction`: prepare and compact).

It is also the readable reference the vectorised tables and analyses are tested against. It
imports nothing from the layers above it (agents, tables, analysis, the faces). Its public names
are re-exported by :mod:`sessionlab`.
"""
