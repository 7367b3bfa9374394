//! Lexer (logos), parser (lalrpop) and spanned AST of the .dae model language.
