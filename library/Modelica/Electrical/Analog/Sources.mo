within Modelica.Electrical.Analog;
package Sources "Time-dependent and controlled voltage and current sources"
  import Modelica.Units.SI;

  model ConstantVoltage "Source for constant voltage: v = V"
    parameter SI.Voltage V(start = 1) "Value of constant voltage";
    extends Interfaces.OnePort;
  equation
    v = V;
  end ConstantVoltage;

  model StepVoltage "Step voltage source: v = offset, plus V from startTime on"
    parameter SI.Voltage V(start = 1) "Height of step";
    parameter SI.Voltage offset = 0 "Voltage offset";
    parameter SI.Time startTime = 0 "Time offset";
    extends Interfaces.OnePort;
  equation
    v = offset + (if time < startTime then 0 else V);
  end StepVoltage;

  model SineVoltage "Sine voltage source: v = offset + V*sin(2*pi*f*(time - startTime) + phase) from startTime on"
    parameter SI.Voltage V(start = 1) "Amplitude of sine wave";
    parameter SI.Angle phase = 0 "Phase of sine wave";
    parameter SI.Frequency f(start = 1) "Frequency of sine wave";
    parameter SI.Voltage offset = 0 "Voltage offset";
    parameter SI.Time startTime = 0 "Time offset";
    extends Interfaces.OnePort;
  equation
    v = offset + (if time < startTime then 0 else V*sin(2*Modelica.Constants.pi*f*(time - startTime) + phase));
  end SineVoltage;

  model ConstantCurrent "Source for constant current: i = I"
    parameter SI.Current I(start = 1) "Value of constant current";
    extends Interfaces.OnePort;
  equation
    i = I;
  end ConstantCurrent;

  model SignalVoltage "Generic voltage source using the input signal as source voltage: p.v - n.v = v"
    Interfaces.PositivePin p "Positive electrical pin";
    Interfaces.NegativePin n "Negative electrical pin";
    Modelica.Blocks.Interfaces.RealInput v(unit = "V") "Voltage between pin p and n (= p.v - n.v) as input signal";
    SI.Current i "Current flowing from pin p to pin n";
  equation
    v = p.v - n.v;
    0 = p.i + n.i;
    i = p.i;
  end SignalVoltage;
end Sources;
