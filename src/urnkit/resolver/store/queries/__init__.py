"""The queries of a :class:`~urnkit.resolver.store.Transaction`, a module per area, each a class
over the transaction's connection: ``tx.records`` (:mod:`.records`), ``tx.organisations``
(:mod:`.organisations`), ``tx.links`` (:mod:`.links`), ``tx.successions`` (:mod:`.successions`),
``tx.identifiers`` (:mod:`.identifiers`), ``tx.neighbours`` (:mod:`.neighbours`), ``tx.oai``
(:mod:`.oai`), ``tx.forwarding`` (:mod:`.forwarding`), ``tx.statistics``
(:mod:`.statistics`), ``tx.accounts`` (:mod:`.accounts`). A package of its own:
``urnkit.resolver.store.records`` and the like name the tables."""
