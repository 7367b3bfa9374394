within Modelica.Blocks;
package Sources "Signal sources"
  import Modelica.Units.SI;

  block Constant "Generate a constant signal: y = k"
    parameter Real k(start = 1) "Constant output value";
    extends Interfaces.SO;
  equation
    y = k;
  end Constant;

  block Step "Generate a step signal: y = offset, plus height from startTime on"
    parameter Real height = 1 "Height of step";
    extends Interfaces.SignalSource;
  equation
    y = offset + (if time < startTime then 0 else height);
  end Step;

  block Sine "Generate a sine signal: y = offset + amplitude*sin(2*pi*f*(time - startTime) + phase) from startTime on (before: offset, or offset + amplitude*sin(phase) if continuous)"
    parameter Real amplitude = 1 "Amplitude of sine wave";
    parameter SI.Frequency f(start = 1) "Frequency of sine wave";
    parameter SI.Angle phase = 0 "Phase of sine wave";
    parameter Boolean continuous = false "Make output continuous by starting at offset + amplitude*sin(phase)";
    extends Interfaces.SignalSource;
  equation
    if continuous then
      y = offset + amplitude*smooth(0, if time < startTime then sin(phase) else sin(2*Modelica.Constants.pi*f*(time - startTime) + phase));
    else
      y = offset + (if time < startTime then 0 else amplitude*sin(2*Modelica.Constants.pi*f*(time - startTime) + phase));
    end if;
  end Sine;
end Sources;
