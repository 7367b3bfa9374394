//! The symbolic core of daec: hash-consed expression DAG, derivatives, tapes, printing.
