// A resistor of the shipped library without a value for R: the error
// points at the declaration of R in the library.
model ResistorWithoutR
  Modelica.Electrical.Analog.Sources.ConstantVoltage source(V = 1);
  Modelica.Electrical.Analog.Basic.Resistor resistor;
  Modelica.Electrical.Analog.Basic.Ground ground;
equation
  connect(source.p, resistor.p);
  connect(resistor.n, source.n);
  connect(source.n, ground.p);
end ResistorWithoutR;
