// Short class definitions: types with attributes, a block with connectors
// of a built-in type, a model defined as a modified model.
type Voltage = Real(unit = "V", nominal = 10);
connector RealInput = input Real;
connector RealOutput = output Real;

block Gain
  parameter Real k = 1;
  RealInput u;
  RealOutput y;
equation
  y = k*u;
end Gain;

block Const
  parameter Real c = 1;
  RealOutput y;
equation
  y = c;
end Const;

model Double = Gain(k = 2);

model Top
  Const src(c = 3);
  Double g;
  Voltage v;
equation
  connect(src.y, g.u);
  v = g.y;
end Top;
