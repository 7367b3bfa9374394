//! Lowering of the .dae AST to a flat scalar DAE.
