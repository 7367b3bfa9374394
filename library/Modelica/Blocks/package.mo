within Modelica;
package Blocks "Input/output blocks: sources, mathematical operations, continuous systems"
end Blocks;
