//! Numerical integration of (overdetermined) DAEs: Radau IIA order 5.
