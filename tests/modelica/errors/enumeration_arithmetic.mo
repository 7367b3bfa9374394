// Enumeration values take no arithmetic (E0138); Integer(m) is the ordinal.
model Arithmetic
  type Mode = enumeration(off, slow, fast);
  parameter Mode m = Mode.slow;
  Real x(start = 0, fixed = true);
equation
  der(x) = m + 1;
end Arithmetic;
