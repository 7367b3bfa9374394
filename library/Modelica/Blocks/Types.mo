within Modelica.Blocks;
package Types "Types of the block parameters"
  type Init = enumeration(
      NoInit "No initialization (start values are used as guess values with fixed = false)",
      SteadyState "Steady state initialization (derivatives of states are zero)",
      InitialState "Initialization with initial states",
      InitialOutput "Initialization with initial outputs (and steady state of the states if possible)")
    "Type of initialization (MSL 4.x Modelica.Blocks.Types.Init)";
end Types;
