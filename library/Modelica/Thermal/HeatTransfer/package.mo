within Modelica.Thermal;
package HeatTransfer "Lumped thermal components"
end HeatTransfer;
