"""The garbage collector: owner references, cascading deletion and orphaning, for any kind."""
