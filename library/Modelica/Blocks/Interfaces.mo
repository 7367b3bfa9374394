within Modelica.Blocks;
package Interfaces "Connectors and partial models of input/output blocks"
  import Modelica.Units.SI;
  connector RealInput = input Real "'input Real' as connector";
  connector RealOutput = output Real "'output Real' as connector";

  partial block SO "Single output continuous block"
    RealOutput y "Connector of Real output signal";
  end SO;

  partial block SISO "Single input, single output continuous block"
    RealInput u "Connector of Real input signal";
    RealOutput y "Connector of Real output signal";
  end SISO;

  partial block SI2SO "Two inputs, one output continuous block"
    RealInput u1 "Connector of Real input signal 1";
    RealInput u2 "Connector of Real input signal 2";
    RealOutput y "Connector of Real output signal";
  end SI2SO;

  partial block SignalSource "Base class of continuous signal sources with an offset and a start time"
    extends SO;
    parameter Real offset = 0 "Offset of output signal y";
    parameter SI.Time startTime = 0 "Output y = offset for time < startTime";
  end SignalSource;
end Interfaces;
