"""The systems of the other seed papers, as comparison methods (SPEC §6).

Each module registers its methods with :func:`dpfed_core.methods.register_method` when imported;
this package imports them all so ``dpfed_core.methods.METHODS`` lists them.
"""
