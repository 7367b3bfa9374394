model Resistor
  parameter Real R = 1;
  Real v;
equation
  v = R;
end Resistor;

model Circuit
  Resistor R1(Rx = 2);
end Circuit;
