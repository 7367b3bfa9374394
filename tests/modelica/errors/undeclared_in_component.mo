model Resistor
  parameter Real R = 1;
  Real v;
  Real i;
equation
  v = R*current;
  i = 1;
end Resistor;

model Circuit
  Resistor R1;
end Circuit;
