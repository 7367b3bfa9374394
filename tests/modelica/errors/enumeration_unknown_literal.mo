// An enumeration has no literal of that name (E0138, with a suggestion).
model UnknownLiteral
  type Mode = enumeration(off, slow, fast);
  parameter Mode m = Mode.flast;
  Real x(start = 0, fixed = true);
equation
  der(x) = if m == Mode.fast then 2 else 1;
end UnknownLiteral;
