// Values of two enumeration types do not compare (E0138).
model CompareTypes
  type Mode = enumeration(off, on);
  type Gear = enumeration(first, second);
  parameter Mode m = Mode.on;
  parameter Gear g = Gear.first;
  Real x(start = 0, fixed = true);
equation
  der(x) = if m == g then 2 else 1;
end CompareTypes;
